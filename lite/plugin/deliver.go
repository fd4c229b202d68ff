package plugin

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// outbound is a message nobody asked for in that turn, for a chat.
type outbound struct {
	chat, text string
	reply      chan error // buffered: the Gateway's goroutine never waits
}

var (
	errGone    = errors.New("the plugin stopped before it confirmed the message: it may not have reached the chat")
	errStopped = errors.New("the plugin gateway is stopped: the message was not sent")
)

// Send sends text to a chat of the plugin, as send_message, and returns
// once the plugin acknowledged it. A plugin that is down (restarting, or
// stopped) is not waited for: Send says so and sends nothing, and the
// caller may try again later; nothing is queued.
func (g *Gateway) Send(ctx context.Context, chatID, text string) error {
	if strings.TrimSpace(text) == "" {
		return errors.New("the message is empty: give it some text")
	}
	m := outbound{chat: chatID, text: text, reply: make(chan error, 1)}
	select {
	case g.b.outbound <- m:
	case <-g.done:
		return errStopped
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-m.reply:
		return err
	case <-g.done:
		return errGone
	case <-ctx.Done():
		return fmt.Errorf("the plugin did not confirm the message in time (it may still reach the chat): %w", ctx.Err())
	}
}

// onOutbound sends Send's message, or says why it cannot.
func (b *bridge) onOutbound(m outbound) {
	switch {
	case b.p == nil || !b.ready || b.stopping:
		m.reply <- fmt.Errorf("the plugin gateway %s is not running (it restarts on its own): the message was not sent; try again later", b.name)
		return
	case len(b.waiting) >= maxRequests:
		m.reply <- fmt.Errorf("the plugin gateway %s has not acknowledged its last %d messages: the message was not sent; try again later", b.name, maxRequests)
		return
	}
	id := b.nextID()
	b.track(id, "send_message", m.chat)
	if !b.command(SendMessage{RequestID: id, ChatID: m.chat, Content: m.text}) {
		m.reply <- fmt.Errorf("the plugin gateway %s does not read its commands: the message was not sent; try again later", b.name)
		return
	}
	b.waiting[id] = m.reply
}

// abandon tells every Send waiting for an acknowledgement that it will
// not come.
func (b *bridge) abandon(err error) {
	for id, c := range b.waiting {
		c <- err
		delete(b.waiting, id)
	}
}
