package hooks

import (
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"net/http"
	"strings"

	"github.com/agnx-lite/agnx-lite/lite/config"
)

// signatureHeader is where GitHub puts "sha256=<hex of HMAC-SHA256>" of
// the raw body, keyed by the hook's secret.
const signatureHeader = "X-Hub-Signature-256"

// Sign returns the X-Hub-Signature-256 value that a sender puts on body
// for a hook with secret: "sha256=" and the hex of the body's
// HMAC-SHA256, as GitHub signs. It is the other half of what Deliver
// checks, for tests and for scripts that post to a signed hook.
func Sign(secret string, body []byte) string {
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write(body)
	return "sha256=" + hex.EncodeToString(mac.Sum(nil))
}

// decoyKey stands in for the secret and the token of a hook that does
// not exist (or is disabled), so that its refusal costs what a real
// hook's does: an answer that came faster would tell the names apart.
// What it authenticates is refused all the same.
var decoyKey = []byte("agnx-lite: no hook has this key, it only spends the time a real one would")

// hookAuth checks a delivery against the hook's secret or token (h nil:
// no such hook) and returns "" when it passes, else why not, for the log
// only: the caller answers every refusal with httpapi.HookRefused. It
// does the same work whatever h is: one HMAC-SHA256 over the body and
// one constant-time comparison of the hashed bearer token, each against
// the hook's key or decoyKey.
func hookAuth(h *config.Hook, header http.Header, body []byte) string {
	secret, token := decoyKey, decoyKey
	if h != nil && h.Signed {
		secret = []byte(h.Secret.Value())
	} else if h != nil {
		token = []byte(h.Token.Value())
	}
	sig, prefixed := strings.CutPrefix(header.Get(signatureHeader), "sha256=")
	got, err := hex.DecodeString(sig)
	wellFormed := prefixed && err == nil && len(got) == sha256.Size
	if !wellFormed {
		got = make([]byte, sha256.Size)
	}
	mac := hmac.New(sha256.New, secret)
	mac.Write(body)
	sigOK := hmac.Equal(mac.Sum(nil), got) && wellFormed

	scheme, tok, _ := strings.Cut(header.Get("Authorization"), " ")
	// Hashed first, so the comparison takes the same time whatever the
	// lengths.
	gotTok, wantTok := sha256.Sum256([]byte(strings.TrimSpace(tok))), sha256.Sum256(token)
	tokOK := subtle.ConstantTimeCompare(gotTok[:], wantTok[:]) == 1 && strings.EqualFold(scheme, "Bearer")

	switch {
	case h == nil:
		return "no such hook, or it is disabled"
	case h.Signed && !wellFormed:
		return "missing or malformed X-Hub-Signature-256"
	case h.Signed && !sigOK:
		return "the signature does not match the body (a wrong secret, or a changed body)"
	case !h.Signed && !tokOK:
		return "missing or wrong bearer token"
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
func deliveryID(h *config.Hook, header http.Header) (id, problem string) {
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
