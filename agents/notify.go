package agents

import (
	"net/url"
	"strconv"
	"strings"
)

// The values of spec.notify.when.
const (
	// NotifyUnwatched (the default) notifies of turns nobody watched: the
	// client left, or a schedule, webhook or process started the turn.
	NotifyUnwatched = "unwatched"
	// NotifyAlways notifies of every turn's end.
	NotifyAlways = "always"
	// NotifyNever sends no notification at all.
	NotifyNever = "never"
)

// DeliveryTypes are the kinds of Delivery: log (the daemon's log), chat
// (a gateway's chat: the session's own, or gateway and chat_id), webhook
// (a JSON POST to url) and ntfy (a text POST to an ntfy-compatible url).
var DeliveryTypes = []string{"log", "chat", "webhook", "ntfy"}

// NtfyPriorities are the priorities an ntfy delivery may name.
var NtfyPriorities = []string{"1", "2", "3", "4", "5", "min", "low", "default", "high", "max", "urgent"}

// Bounds of a delivery's fields: they end up in HTTP headers and logs.
const (
	maxDeliveries  = 8
	maxDeliveryURL = 2048
	maxDeliveryTok = 512
	maxChatID      = 64
)

// NotifySettings is spec.notify (an agnx-lite extension): when the agent
// notifies of a turn's end, and where its notifications go. Deliveries
// empty means the default: the session's own chat for a gateway's session,
// the log otherwise.
type NotifySettings struct {
	// When is unwatched (the default: of turns nobody watched, as the
	// client left or a schedule, webhook or process started the turn),
	// always or never; Load sets NotifyUnwatched when it is absent.
	When string `yaml:"when"`
	// Deliveries are where notifications go (at most 8); empty: the
	// session's own chat for a gateway's session, the log otherwise.
	Deliveries []Delivery `yaml:"deliveries"`
}

// validateNotify checks spec.notify (and sets its default when).
func validateNotify(doc *Doc, n *NotifySettings) error {
	if n.When == "" {
		n.When = NotifyUnwatched
	}
	if err := oneOf(doc, "spec.notify.when", n.When, NotifyUnwatched, NotifyAlways, NotifyNever); err != nil {
		return err
	}
	if len(n.Deliveries) > maxDeliveries {
		return doc.Errorf("spec.notify.deliveries", "spec.notify.deliveries has %d entries; at most %d are allowed", len(n.Deliveries), maxDeliveries)
	}
	for i := range n.Deliveries {
		if err := validateDelivery(doc, "spec.notify.deliveries["+strconv.Itoa(i)+"]", &n.Deliveries[i]); err != nil {
			return err
		}
	}
	return nil
}

// validateDelivery checks one delivery of spec.notify or of a policy's
// notify.deliveries; key is its path in the file.
func validateDelivery(doc *Doc, key string, d *Delivery) error {
	if err := oneOf(doc, key+".type", d.Type, DeliveryTypes...); err != nil {
		return err
	}
	switch d.Type {
	case "webhook", "ntfy":
		if len(d.URL) > maxDeliveryURL {
			return doc.Errorf(key+".url", "%s.url is longer than %d bytes", key, maxDeliveryURL)
		}
		u, err := url.Parse(d.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return doc.Errorf(key+".url", "%s.url must be an http or https URL", key)
		}
	case "chat":
		if (d.Gateway == "") != (d.ChatID == "") {
			return doc.Errorf(key, "%s names a gateway without a chat_id or a chat_id without a gateway: give both, or neither for the session's own chat", key)
		}
		if len(d.ChatID) > maxChatID || strings.ContainsAny(d.ChatID, "/\n") || (d.Gateway != "" && !ValidName(d.Gateway)) {
			return doc.Errorf(key, "%s: gateway must be a gateway's name and chat_id a chat id of at most %d characters", key, maxChatID)
		}
	}
	if d.Type != "ntfy" && (d.Token != "" || d.Priority != "") {
		return doc.Errorf(key, "%s: token and priority are for type ntfy only", key)
	}
	if len(d.Token) > maxDeliveryTok || strings.ContainsAny(d.Token, "\r\n") {
		return doc.Errorf(key+".token", "%s.token must be one line of at most %d bytes (write ${NAME} to take it from sandbox.env)", key, maxDeliveryTok)
	}
	if d.Priority != "" {
		if err := oneOf(doc, key+".priority", d.Priority, NtfyPriorities...); err != nil {
			return err
		}
	}
	if d.Type != "webhook" && d.Type != "ntfy" && d.URL != "" {
		return doc.Errorf(key+".url", "%s.url is for types webhook and ntfy only", key)
	}
	return nil
}
