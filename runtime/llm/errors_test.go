package llm

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agnx-lite/agnx-lite/runtime"
)

func TestErrorMessage(t *testing.T) {
	tests := []struct{ body, want string }{
		{`{"error":"model \"x\" not found, try pulling it first"}`, `model "x" not found, try pulling it first`},
		{`{"error":{"message":"Incorrect API key provided","type":"invalid_request_error"}}`, "Incorrect API key provided"},
		{`{"error":{"type":"server_error"}}`, "server_error"},
		{`{"message":"nope"}`, "nope"},
		{`{"detail":"Not Found"}`, "Not Found"},
		{"<html>\n<body>bad gateway</body>", "<html>"},
		{"", ""},
		{strings.Repeat("z", 500), strings.Repeat("z", 200) + "…"},
	}
	for _, tt := range tests {
		assert.Equal(t, tt.want, ErrorMessage([]byte(tt.body)))
	}
}

func TestServer_StatusError(t *testing.T) {
	s := &Server{Provider: "p", Name: "Thing", BaseURL: "http://h"}
	kinds := map[int]runtime.ErrorKind{
		401: runtime.ErrAuth, 403: runtime.ErrAuth, 404: runtime.ErrBadRequest,
		429: runtime.ErrRateLimited, 500: runtime.ErrServer, 503: runtime.ErrServer, 400: runtime.ErrBadRequest,
	}
	for status, kind := range kinds {
		e := s.StatusError(status, "why")
		assert.Equal(t, kind, e.Kind, status)
		assert.Equal(t, status, e.Status)
		assert.Equal(t, "p", e.Provider)
		assert.Contains(t, e.Message, "Thing at http://h")
		assert.NotContains(t, e.Message, "\n")
	}
}
