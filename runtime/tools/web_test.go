package tools

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestHTMLText(t *testing.T) {
	doc := `<!doctype html><html><head><title>T</title><style>p{color:red}</style></head>
<body><h1>Hello &amp; welcome</h1><script>alert("x")</script><p>First   para.</p>
<ul><li>one</li><li>two</li></ul><p>caf&eacute; &lt;3</p></body></html>`
	assert.Equal(t, "Hello & welcome\nFirst para.\none\ntwo\ncafé <3", HTMLText(doc))
	assert.Equal(t, "", HTMLText(""))
	assert.Equal(t, "broken", HTMLText("broken<div"))
}

func FuzzHTMLText(f *testing.F) {
	f.Add("<p>a<script>b</script>c</p>")
	f.Add("<<<>>>&amp;&#x;")
	f.Fuzz(func(t *testing.T, s string) {
		out := HTMLText(s)
		if strings.Contains(out, "\n\n") {
			t.Fatalf("blank lines not collapsed: %q", out)
		}
	})
}

func TestPublic(t *testing.T) {
	for addr, want := range map[string]bool{
		"8.8.8.8": true, "2606:4700::1111": true,
		"127.0.0.1": false, "::1": false, "10.1.2.3": false, "192.168.1.1": false, "172.16.0.1": false,
		"169.254.169.254": false, "fe80::1": false, "100.64.0.1": false, "0.0.0.0": false, "fd00::1": false,
		"::ffff:127.0.0.1": false,
	} {
		assert.Equal(t, want, public(netip.MustParseAddr(addr)), addr)
	}
}

func TestWeb_Run(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/page":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			w.Write([]byte("<html><body><h1>Title</h1><p>Body text</p></body></html>"))
		case "/big":
			w.Write([]byte(strings.Repeat("x", 5000)))
		case "/huge":
			w.Write([]byte(strings.Repeat("y", 200<<10)))
		case "/redirect":
			http.Redirect(w, r, "/page", http.StatusFound)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	ctx := context.Background()

	res, err := (&Web{}).Run(ctx, []byte(`{"url":"`+srv.URL+`/page"}`))
	require.NoError(t, err)
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "local or private address", "loopback is refused by default")

	open := &Web{AllowPrivate: true, MaxBytes: 1000}
	res, err = open.Run(ctx, []byte(`{"action":"fetch","url":"`+srv.URL+`/redirect"}`))
	require.NoError(t, err)
	assert.False(t, res.IsError, res.Content)
	assert.Equal(t, "Source: "+srv.URL+"/redirect\n\nTitle\nBody text", res.Content)

	res, _ = open.Run(ctx, []byte(`{"url":"`+srv.URL+`/big"}`))
	assert.True(t, strings.HasSuffix(res.Content, "\n\n[content truncated at 50 KB]"), "a url alone is a fetch")
	assert.Less(t, len(res.Content), 1200)

	res, _ = (&Web{AllowPrivate: true}).Run(ctx, []byte(`{"action":"fetch","url":"`+srv.URL+`/huge"}`))
	assert.Len(t, res.Content, maxWebText+len("\n\n[content truncated at 50 KB]"), "the text is cut at 50 KiB")

	res, _ = open.Run(ctx, []byte(`{"url":"`+srv.URL+`/missing"}`))
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "404")

	res, _ = open.Run(ctx, []byte(`{"url":"file:///etc/passwd"}`))
	assert.True(t, res.IsError)
	assert.Contains(t, res.Content, "not an http or https URL")
}
