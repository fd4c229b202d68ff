package lite

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"strings"
)

// signatureHeader is where GitHub puts "sha256=<hex of HMAC-SHA256>" of
// the raw body, keyed by the hook's secret.
const signatureHeader = "X-Hub-Signature-256"

// hookAuth checks a delivery against the hook's secret or token and
// returns "" when it passes, else the sentence for the 401: what to send,
// never what was wrong in what was sent. Both comparisons take constant
// time.
func hookAuth(h *HookConfig, header http.Header, body []byte) string {
	if h.signed {
		sig, ok := strings.CutPrefix(header.Get(signatureHeader), "sha256=")
		got, err := hex.DecodeString(sig)
		if !ok || err != nil || len(got) != sha256.Size {
			return "missing or malformed signature: send X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the body, keyed by the hook's secret>"
		}
		mac := hmac.New(sha256.New, []byte(h.Secret.Value()))
		mac.Write(body)
		if !hmac.Equal(mac.Sum(nil), got) {
			return "the signature does not match the body: check the hook's secret"
		}
		return ""
	}
	scheme, tok, _ := strings.Cut(header.Get("Authorization"), " ")
	if !strings.EqualFold(scheme, "Bearer") ||
		subtle.ConstantTimeCompare([]byte(strings.TrimSpace(tok)), []byte(h.Token.Value())) != 1 {
		return "missing or wrong token: send Authorization: Bearer <the hook's token>"
	}
	return ""
}

// deliveryHeaders are where a delivery's id is looked for when the hook
// names no header: GitHub's, then common ones.
var deliveryHeaders = []string{"X-GitHub-Delivery", "X-Delivery-ID", "Idempotency-Key"}

// maxDeliveryID bounds a delivery id (GitHub's are 36-character UUIDs).
const maxDeliveryID = 128

// deliveryID returns the delivery's id ("" when it has none) or the
// sentence for a 400 when it cannot be one: 1 to 128 visible ASCII
// characters.
func deliveryID(h *HookConfig, header http.Header) (id, problem string) {
	names := deliveryHeaders
	if h.DeliveryHeader != "" {
		names = []string{h.DeliveryHeader}
	}
	var name string
	for _, name = range names {
		if id = header.Get(name); id != "" {
			break
		}
	}
	if id == "" {
		return "", ""
	}
	if len(id) > maxDeliveryID || strings.ContainsFunc(id, func(r rune) bool { return r <= ' ' || r > '~' }) {
		return "", name + " is not a delivery id: send 1 to 128 visible ASCII characters"
	}
	return id, ""
}
