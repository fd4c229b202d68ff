package telegram

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agnx-lite/agnx-lite/agents"
	"github.com/agnx-lite/agnx-lite/runtime"
)

// command splits "/name@bot arg" into name and arg. A command addressed to
// another bot is not a command for this one; one of this gateway's own
// names is (unknown ones go to the agent as text).
func (g *poller) command(text string) (cmd, arg string, ok bool) {
	if !strings.HasPrefix(text, "/") {
		return "", "", false
	}
	head, arg, _ := strings.Cut(text, " ")
	cmd, bot, addressed := strings.Cut(head[1:], "@")
	if addressed && !strings.EqualFold(bot, g.me.Username) {
		return "", "", false
	}
	switch cmd = strings.ToLower(cmd); cmd {
	case "start", "help", "new", "reset", "agent", "status", "cancel", "compact":
		return cmd, strings.TrimSpace(arg), true
	}
	return "", "", false
}

// runCommand answers a command on the poll goroutine. Commands change the
// chat's state in their own transactions; the offset moves after them. An
// error means the command must be fetched again.
func (g *poller) runCommand(poll context.Context, m *Message, in agents.Inbound, cmd, arg string) error {
	chat := m.Chat.ID
	reply, err := g.cmds.run(poll, m, in, cmd, arg)
	var ae *agents.AccessError
	switch {
	case errors.As(err, &ae):
		reply = "Sorry, I cannot do that here: " + ae.Why + "."
	case err != nil && retryable(err):
		return err
	case err != nil:
		g.bot.log.Error("telegram: command failed", "command", cmd, "chat_id", chat, "err", err)
		reply = "Sorry, /" + cmd + " failed: " + err.Error() + "."
	}
	g.bot.say(poll, chat, reply)
	return nil
}

// commands carries out the bot's commands: they read and change the chat's
// session through Chats, Agents and the Loop, and keep no state.
type commands struct{ o *Options }

// run carries out cmd and returns what to answer.
func (g commands) run(ctx context.Context, m *Message, in agents.Inbound, cmd, arg string) (string, error) {
	switch cmd {
	case "start", "help":
		return g.cmdStart(ctx, m, in)
	case "new", "reset":
		return g.cmdNew(ctx, in)
	case "agent":
		return g.cmdAgent(ctx, in, arg)
	case "status":
		return g.cmdStatus(ctx, in)
	case "cancel":
		return g.cmdCancel(ctx, in)
	case "compact":
		return g.cmdCompact(ctx, in)
	}
	return "", fmt.Errorf("/%s is not a command of this bot", cmd)
}

const usage = "Send me a message and I answer; photos and documents are saved for me to read.\n\n" +
	"/new — a fresh conversation (the old one is kept)\n" +
	"/agent NAME — talk to another agent\n" +
	"/status — this conversation's agent, model and size\n" +
	"/cancel — stop the answer in progress\n" +
	"/compact — summarise the older messages to make room"

func (g commands) cmdStart(ctx context.Context, m *Message, in agents.Inbound) (string, error) {
	_, agent, err := g.o.Chats.Session(ctx, in)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("Hi %s! You are talking to the agent %s.\n\n%s", m.From.FirstName, agent, usage), nil
}

func (g commands) cmdNew(ctx context.Context, in agents.Inbound) (string, error) {
	_, agent, err := g.o.Chats.Current(GatewayName, in.ChatID)
	if errors.Is(err, ErrNoChat) {
		_, agent, err = g.o.Chats.Session(ctx, in)
		if err == nil {
			return "A fresh conversation with " + agent + " has started.", nil
		}
	}
	if err != nil {
		return "", err
	}
	if err := g.o.Agents.Admit(agent, in); err != nil {
		return "", err
	}
	if _, err := g.o.Chats.NewSession(ctx, in, agent); err != nil {
		return "", err
	}
	return "A fresh conversation with " + agent + " has started; the old one is kept.", nil
}

func (g commands) cmdAgent(ctx context.Context, in agents.Inbound, name string) (string, error) {
	if name == "" {
		_, agent, err := g.o.Chats.Session(ctx, in)
		if err != nil {
			return "", err
		}
		return "You are talking to " + agent + ". Switch with /agent NAME.", nil
	}
	if !agents.ValidName(name) {
		return fmt.Sprintf("%q is not an agent name (letters, digits and hyphens).", name), nil
	}
	if _, err := g.o.Agents.Agent(name); err != nil {
		return "", err
	}
	if err := g.o.Agents.Admit(name, in); err != nil {
		return "", err
	}
	if _, err := g.o.Chats.NewSession(ctx, in, name); err != nil {
		return "", err
	}
	return "You are now talking to " + name + ", in a fresh conversation.", nil
}

func (g commands) cmdStatus(ctx context.Context, in agents.Inbound) (string, error) {
	sid, agent, err := g.o.Chats.Current(GatewayName, in.ChatID)
	if errors.Is(err, ErrNoChat) {
		return "No conversation yet: send a message to start one.", nil
	}
	if err != nil {
		return "", err
	}
	info, err := g.o.Loop.Session(ctx, sid)
	if err != nil {
		return "", err
	}
	model := "unknown"
	if a, err := g.o.Agents.Agent(agent); err == nil {
		model = a.Model
	}
	u := info.Usage
	return fmt.Sprintf("Session: %s\nAgent: %s\nModel: %s\nStatus: %s\nTurns: %d\nTokens: %d (%d in, %d out)",
		sid, agent, model, info.Status, info.Turns, u.Total(), u.PromptTokens, u.CompletionTokens), nil
}

func (g commands) cmdCancel(ctx context.Context, in agents.Inbound) (string, error) {
	sid, _, err := g.o.Chats.Current(GatewayName, in.ChatID)
	if errors.Is(err, ErrNoChat) {
		return "Nothing is running.", nil
	}
	if err != nil {
		return "", err
	}
	ok, err := g.o.Loop.Cancel(ctx, sid)
	if err != nil && !errors.Is(err, runtime.ErrSessionNotFound) {
		return "", err
	}
	if !ok {
		return "Nothing is running.", nil
	}
	return "Cancelled.", nil
}

// compactWait bounds how long /compact holds the poll goroutine: the
// summary goes on being written after it, and the chat is told so.
const compactWait = 10 * time.Second

func (g commands) cmdCompact(ctx context.Context, in agents.Inbound) (string, error) {
	sid, _, err := g.o.Chats.Current(GatewayName, in.ChatID)
	if errors.Is(err, ErrNoChat) {
		return "No conversation yet: send a message to start one.", nil
	}
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(ctx, compactWait)
	defer cancel()
	res, err := g.o.Loop.Compact(ctx, sid)
	if say, ok := runtime.SayCompact(res, err); ok {
		return say, nil
	}
	return "", err
}
