package httpapi

import (
	"crypto/subtle"
	"net/http"
	"time"
)

// UI serves the web UI's files (lite/webui): Serve answers r with the
// asset called name, or returns false when there is none, having written
// nothing but headers every answer of the UI carries (its CSP), which the
// 404 then carries too.
type UI interface {
	Serve(w http.ResponseWriter, r *http.Request, name string) bool
}

// uiIndex serves GET /: the web UI's page.
func (s *Server) uiIndex(w http.ResponseWriter, r *http.Request) {
	s.uiAsset(w, r, "index.html")
}

// uiFile serves GET /ui/{file...}: the page's scripts, styles, icons.
func (s *Server) uiFile(w http.ResponseWriter, r *http.Request) {
	s.uiAsset(w, r, r.PathValue("file"))
}

func (s *Server) uiAsset(w http.ResponseWriter, r *http.Request, name string) {
	if s.o.UI == nil {
		writeProblem(w, r, http.StatusNotFound, codeNotFound, "this server has no web UI: use the API (docs/openapi.yaml)")
		return
	}
	if !s.o.UI.Serve(w, r, name) {
		writeProblem(w, r, http.StatusNotFound, codeNotFound, "the web UI has no file "+clip(name, 100)+": open / to load the UI")
	}
}

// signin serves POST /ui/signin {"token": "..."}: with the API token,
// 204 and the sign-in cookie (webcookie.go); a wrong token 401, and from
// an address that sent too many, 429 without a look at the token
// (throttle.go: per address, so the owner elsewhere is never held up).
// Without an API token set there is nothing to sign in to: 204, no cookie.
func (s *Server) signin(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Token string `json:"token"`
	}
	if status, err := decode(r, &body); err != nil {
		writeProblem(w, r, status, codeInvalid, err.Error())
		return
	}
	token := s.o.APIToken
	if token == "" {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	c, now := s.caller(r), time.Now()
	wait, charged := s.throttle.admit(c.addr, now)
	if wait > 0 {
		s.refused.note(reasonThrottled, r, c)
		tooManyGuesses(w, r, public, wait)
		return
	}
	if subtle.ConstantTimeCompare([]byte(body.Token), []byte(token)) != 1 {
		s.wrongToken(failSignin, r, c, now, charged)
		writeProblem(w, r, http.StatusUnauthorized, codeUnauthorized,
			"that is not the server's API token: paste the value of server.api_token (often AGNX_API_TOKEN in agnx.env)")
		return
	}
	s.throttle.succeed(c.addr)
	s.setWebCookie(w, r, signWebCookie(token, now.Add(webCookieAge)), webCookieAge)
	w.WriteHeader(http.StatusNoContent)
}

// signout serves POST /ui/signout: 204, and the cookie cleared.
func (s *Server) signout(w http.ResponseWriter, r *http.Request) {
	s.setWebCookie(w, r, "", 0)
	w.WriteHeader(http.StatusNoContent)
}
