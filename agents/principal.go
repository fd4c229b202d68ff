package agents

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"unicode"
)

// Principal is who a conversation speaks for: the owner of the box (the
// API, the CLI, the web page, an editor over ACP), a Telegram user or
// group, a chat of a gateway plugin, an OpenAI-endpoint caller, a webhook,
// a schedule or a task. Every session records one when it starts; which
// of an agent's sessions a session may read (the session tool, memory
// recall) follows from it and the agent's [SessionAccess].
//
// It is written "kind" (owner) or "kind:id": owner, telegram:user:123,
// telegram:group:-1001234, plugin:whatsapp:+4917..., openai:3f2a...,
// webhook:github, schedule:heartbeat:assistant, task:board/t-1,
// session:<id>. The zero value is no principal: a session stored before
// principals existed, until [PrincipalOf] gives it one.
type Principal struct {
	Kind PrincipalKind
	// ID says which one of its kind; "" for the owner.
	ID string
}

// PrincipalKind is the first part of a principal.
type PrincipalKind string

// The kinds of principal.
const (
	// KindOwner is whoever holds the API token or the box: the HTTP API,
	// the web page, the CLI, an editor over ACP.
	KindOwner PrincipalKind = "owner"
	// KindTelegram is a Telegram chat: "user:<id>" for a private chat,
	// "group:<chat id>" for a group, supergroup or channel.
	KindTelegram PrincipalKind = "telegram"
	// KindPlugin is a chat of a gateway plugin: "<plugin>:<chat id>".
	KindPlugin PrincipalKind = "plugin"
	// KindOpenAI is a caller of the OpenAI-compatible endpoint: a digest
	// of its caller key, never the key.
	KindOpenAI PrincipalKind = "openai"
	// KindWebhook is a webhook: its name in agnx.yaml.
	KindWebhook PrincipalKind = "webhook"
	// KindSchedule is a schedule: "heartbeat:<agent>" for an agent's
	// heartbeat.
	KindSchedule PrincipalKind = "schedule"
	// KindTask is a task of a task board: "<board>/<task id>".
	KindTask PrincipalKind = "task"
	// KindSession speaks for another session: a subagent's session stored
	// before principals existed speaks for its parent ("<parent id>").
	// Subagents started since inherit their parent's principal instead.
	KindSession PrincipalKind = "session"
)

var principalKinds = []PrincipalKind{KindOwner, KindTelegram, KindPlugin, KindOpenAI, KindWebhook, KindSchedule, KindTask, KindSession}

// maxPrincipal bounds a principal's text: a plugin's name and a chat id
// of 256 bytes fit.
const maxPrincipal = 512

// Owner is the owner's principal.
func Owner() Principal { return Principal{Kind: KindOwner} }

// TelegramPrincipal is a Telegram chat's principal: a group's when group
// is set or the chat id is negative (Telegram numbers groups and channels
// below zero), else the user's whose private chat it is.
func TelegramPrincipal(chatID string, group bool) Principal {
	if group || strings.HasPrefix(chatID, "-") {
		return Principal{Kind: KindTelegram, ID: "group:" + chatID}
	}
	return Principal{Kind: KindTelegram, ID: "user:" + chatID}
}

// PluginPrincipal is the principal of chat chatID of the gateway plugin
// named plugin.
func PluginPrincipal(plugin, chatID string) Principal {
	return Principal{Kind: KindPlugin, ID: plugin + ":" + chatID}
}

// OpenAIPrincipal is an OpenAI-endpoint caller's principal: the first 16
// bytes of the SHA-256 of its caller key, in hex. The key itself is never
// stored as a principal, so a listing or an export that shows principals
// does not show the keys.
func OpenAIPrincipal(key string) Principal {
	sum := sha256.Sum256([]byte(key))
	return Principal{Kind: KindOpenAI, ID: hex.EncodeToString(sum[:16])}
}

// WebhookPrincipal is the principal of the webhook named name.
func WebhookPrincipal(name string) Principal { return Principal{Kind: KindWebhook, ID: name} }

// SchedulePrincipal is the principal of the schedule id.
func SchedulePrincipal(id string) Principal { return Principal{Kind: KindSchedule, ID: id} }

// HeartbeatPrincipal is the principal of an agent's heartbeat.
func HeartbeatPrincipal(agent string) Principal { return SchedulePrincipal("heartbeat:" + agent) }

// TaskPrincipal is the principal of a task: its board and id.
func TaskPrincipal(board, id string) Principal {
	return Principal{Kind: KindTask, ID: board + "/" + id}
}

// IsZero reports whether p is no principal.
func (p Principal) IsZero() bool { return p.Kind == "" }

// Automated reports whether no person speaks through p: a webhook, a
// schedule or a task. Such sessions see only themselves by default
// ([SessionAccess.Automated]).
func (p Principal) Automated() bool {
	return p.Kind == KindWebhook || p.Kind == KindSchedule || p.Kind == KindTask
}

// String is p as stored and shown: "owner", or "kind:id".
func (p Principal) String() string {
	if p.ID == "" {
		return string(p.Kind)
	}
	return string(p.Kind) + ":" + p.ID
}

// ParsePrincipal reads a principal as String writes it. A known kind is
// required, an id for every kind but owner (which takes none), at most
// 512 bytes in all and no control characters.
func ParsePrincipal(s string) (Principal, error) {
	if s == "" {
		return Principal{}, errors.New("a principal may not be empty: write owner, or kind:id like telegram:user:123")
	}
	if len(s) > maxPrincipal {
		return Principal{}, errors.New("a principal is at most 512 bytes")
	}
	if strings.IndexFunc(s, unicode.IsControl) >= 0 {
		return Principal{}, errors.New("a principal may not hold control characters")
	}
	kind, id, _ := strings.Cut(s, ":")
	p := Principal{Kind: PrincipalKind(kind), ID: id}
	known := false
	for _, k := range principalKinds {
		known = known || k == p.Kind
	}
	switch {
	case !known:
		return Principal{}, errors.New("principal " + strconv.Quote(s) + " has an unknown kind: it is one of owner, telegram, plugin, openai, webhook, schedule, task, session")
	case p.Kind == KindOwner && id != "":
		return Principal{}, errors.New("principal " + strconv.Quote(s) + ": the owner's is just owner")
	case p.Kind != KindOwner && id == "":
		return Principal{}, errors.New("principal " + strconv.Quote(s) + " names no id: write kind:id, like telegram:user:123")
	}
	return p, nil
}

// PrincipalOf is the principal a session's record implies when it names
// none: a session stored before principals existed, or one whose starter
// gave none. The record's gateway and chat say whose it is: a Telegram
// chat's, an OpenAI caller's (chat "<agent>:<key>"), a webhook's, a
// heartbeat's, a task's, a subagent's (it speaks for its parent session),
// and a chat of any other gateway is a plugin's. Sessions of the API, the
// CLI, the web page and ACP, and any other without a chat, are the
// owner's.
func PrincipalOf(gateway, chatID, parent string) Principal {
	switch {
	case parent != "":
		return Principal{Kind: KindSession, ID: parent}
	case gateway == "" || gateway == "http" || gateway == "cli" || gateway == "acp" || chatID == "":
		return Owner()
	}
	switch gateway {
	case "telegram":
		return TelegramPrincipal(chatID, false)
	case "openai":
		_, key, _ := strings.Cut(chatID, ":")
		return OpenAIPrincipal(key)
	case "webhook":
		return WebhookPrincipal(chatID)
	case HeartbeatGateway:
		return HeartbeatPrincipal(chatID)
	case "task":
		board, id, _ := strings.Cut(chatID, "/")
		return TaskPrincipal(board, id)
	case "agent": // a subagent's, whose parent id is its chat
		return Principal{Kind: KindSession, ID: chatID}
	}
	return PluginPrincipal(gateway, chatID)
}
