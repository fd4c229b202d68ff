package webui_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/webui"
)

var page = strings.Repeat("<p>agnx-lite</p>\n", 200)

func testFS() fstest.MapFS {
	return fstest.MapFS{
		"index.html":  {Data: []byte(page)},
		"app.js":      {Data: []byte(strings.Repeat("export const x = 1;\n", 100))},
		"app.css":     {Data: []byte("body{color:#222}")},
		"icon.svg":    {Data: []byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`)},
		"lib/md.js":   {Data: []byte("export function md() {}\n")},
		"font.woff2":  {Data: []byte{1, 2, 3}},
		".hidden":     {Data: []byte("secret")},
		"lib/.x/a.js": {Data: []byte("x")},
		"big.bin":     {Data: make([]byte, webui.MaxAssetBytes+1)},
	}
}

// get asks a for what GET or HEAD of path names, as lite/httpapi's
// routes do (/ is the index, /ui/NAME the asset NAME); what Serve does
// not serve is a 404, which carries the headers Serve set.
func get(t *testing.T, a *webui.Assets, method, path string, headers ...string) *http.Response {
	t.Helper()
	req := httptest.NewRequest(method, path, nil)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	name, ok := strings.CutPrefix(path, "/ui/")
	if path == "/" {
		name, ok = webui.Index, true
	}
	if !ok || (method != "GET" && method != "HEAD") || !a.Serve(rec, req, name) {
		rec.WriteHeader(http.StatusNotFound)
	}
	return rec.Result()
}

func body(t *testing.T, resp *http.Response) string {
	t.Helper()
	data, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(data)
}

func requireSecurityHeaders(t *testing.T, h http.Header) {
	t.Helper()
	assert.Equal(t, webui.CSP, h.Get("Content-Security-Policy"))
	assert.Contains(t, h.Get("Content-Security-Policy"), "script-src 'self';")
	assert.Contains(t, h.Get("Content-Security-Policy"), "frame-ancestors 'none'")
	assert.Equal(t, "nosniff", h.Get("X-Content-Type-Options"))
	assert.Equal(t, "no-referrer", h.Get("Referrer-Policy"))
	assert.Equal(t, "DENY", h.Get("X-Frame-Options"))
}

func TestAssets_Serve(t *testing.T) {
	a := webui.New(testFS())
	for _, tc := range []struct{ path, ctype, want string }{
		{"/", "text/html; charset=utf-8", page},
		{"/ui/index.html", "text/html; charset=utf-8", page},
		{"/ui/app.css", "text/css; charset=utf-8", "body{color:#222}"},
		{"/ui/icon.svg", "image/svg+xml", `<svg xmlns="http://www.w3.org/2000/svg"/>`},
		{"/ui/lib/md.js", "text/javascript; charset=utf-8", "export function md() {}\n"},
		{"/ui/font.woff2", "font/woff2", "\x01\x02\x03"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			resp := get(t, a, "GET", tc.path)
			require.Equal(t, http.StatusOK, resp.StatusCode)
			requireSecurityHeaders(t, resp.Header)
			assert.Equal(t, tc.ctype, resp.Header.Get("Content-Type"))
			assert.Equal(t, "no-cache", resp.Header.Get("Cache-Control"))
			assert.Regexp(t, `^"[A-Za-z0-9_-]+"$`, resp.Header.Get("ETag"), "a strong ETag")
			assert.Empty(t, resp.Header.Get("Content-Encoding"), "no gzip unless asked for")
			assert.Equal(t, tc.want, body(t, resp))
		})
	}
}

func TestAssets_Gzip(t *testing.T) {
	a := webui.New(testFS())
	plain := get(t, a, "GET", "/")
	for _, ae := range []string{"gzip", "gzip, deflate, br", "br;q=1.0, gzip;q=0.8", "*", "identity, *;q=0.5"} {
		resp := get(t, a, "GET", "/", "Accept-Encoding", ae)
		require.Equal(t, http.StatusOK, resp.StatusCode, ae)
		assert.Equal(t, "gzip", resp.Header.Get("Content-Encoding"), ae)
		assert.Contains(t, resp.Header.Values("Vary"), "Accept-Encoding")
		assert.NotEqual(t, plain.Header.Get("ETag"), resp.Header.Get("ETag"), "each representation its own strong ETag")
		requireSecurityHeaders(t, resp.Header)
		raw := body(t, resp)
		assert.Less(t, len(raw), len(page))
		assert.Equal(t, resp.Header.Get("Content-Length"), strconv.Itoa(len(raw)))
		zr, err := gzip.NewReader(strings.NewReader(raw))
		require.NoError(t, err)
		unzipped, err := io.ReadAll(zr)
		require.NoError(t, err)
		assert.Equal(t, page, string(unzipped))
	}
	for _, ae := range []string{"", "gzip;q=0", "br", "*;q=0", "gzip;q=0, *", "gzip;q=bad", "deflate"} {
		resp := get(t, a, "GET", "/", "Accept-Encoding", ae)
		assert.Empty(t, resp.Header.Get("Content-Encoding"), "%q", ae)
		assert.Equal(t, page, body(t, resp), "%q", ae)
	}
	// A file gzip would not shrink goes as it is.
	resp := get(t, a, "GET", "/ui/font.woff2", "Accept-Encoding", "gzip")
	assert.Empty(t, resp.Header.Get("Content-Encoding"))
	assert.Equal(t, "\x01\x02\x03", body(t, resp))
}

func TestAssets_NotModified(t *testing.T) {
	a := webui.New(testFS())
	first := get(t, a, "GET", "/ui/app.js")
	tag := first.Header.Get("ETag")
	require.NotEmpty(t, tag)
	gz := get(t, a, "GET", "/ui/app.js", "Accept-Encoding", "gzip")
	gzTag := gz.Header.Get("ETag")
	for _, inm := range []string{tag, gzTag, "W/" + tag, `"other", ` + tag, "*"} {
		resp := get(t, a, "GET", "/ui/app.js", "If-None-Match", inm, "Accept-Encoding", "gzip")
		assert.Equal(t, http.StatusNotModified, resp.StatusCode, inm)
		assert.Equal(t, gzTag, resp.Header.Get("ETag"), "the tag of what would have been sent")
		assert.Empty(t, body(t, resp))
		requireSecurityHeaders(t, resp.Header)
	}
	resp := get(t, a, "GET", "/ui/app.js", "If-None-Match", `"stale"`)
	assert.Equal(t, http.StatusOK, resp.StatusCode)
	other := get(t, a, "GET", "/ui/app.css", "If-None-Match", tag)
	assert.Equal(t, http.StatusOK, other.StatusCode, "one file's tag is not another's")
}

func TestAssets_Head(t *testing.T) {
	a := webui.New(testFS())
	resp := get(t, a, "HEAD", "/ui/app.js")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Equal(t, strconv.Itoa(len(strings.Repeat("export const x = 1;\n", 100))), resp.Header.Get("Content-Length"))
	assert.NotEmpty(t, resp.Header.Get("ETag"))
	assert.Empty(t, body(t, resp))
}

func TestAssets_Unknown(t *testing.T) {
	a := webui.New(testFS())
	for _, p := range []string{"/ui/nope.js", "/ui/", "/ui/.hidden", "/ui/lib/.x/a.js", "/ui/lib", "/ui/../index.html",
		"/ui//app.js", "/ui/big.bin", "/ui/lib/"} {
		resp := get(t, a, "GET", p)
		assert.Equal(t, http.StatusNotFound, resp.StatusCode, p)
		requireSecurityHeaders(t, resp.Header)
	}
	assert.Equal(t, http.StatusNotFound, get(t, a, "POST", "/").StatusCode)
	rec := httptest.NewRecorder()
	assert.False(t, a.Serve(rec, httptest.NewRequest("GET", "/", nil), "nope.js"))
	assert.False(t, rec.Flushed)
	assert.Zero(t, rec.Body.Len(), "nothing written for the caller's own 404")
	assert.Empty(t, rec.Header().Get("Content-Type"), "only the security headers are set")
	requireSecurityHeaders(t, rec.Header())
}

// TestAssets_Concurrent: the first requests race to load each file; all
// get the same bytes and tag (-race checks the rest).
func TestAssets_Concurrent(t *testing.T) {
	a := webui.New(testFS())
	var wg sync.WaitGroup
	tags := make([]string, 16)
	for i := range tags {
		wg.Go(func() {
			resp := get(t, a, "GET", "/", "Accept-Encoding", "gzip")
			tags[i] = resp.Header.Get("ETag")
		})
	}
	wg.Wait()
	for _, tag := range tags {
		assert.Equal(t, tags[0], tag)
	}
}

// TestEmbedded_Budget: the assets built into the binary stay within the
// budget before compression, and the page is among them.
func TestEmbedded_Budget(t *testing.T) {
	fsys := webui.EmbeddedFS()
	total := 0
	require.NoError(t, fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err == nil {
			total += int(info.Size())
		}
		return err
	}))
	assert.LessOrEqual(t, total, webui.MaxAssetBytes, "lite/webui/assets is %d bytes; the budget is %d", total, webui.MaxAssetBytes)
	resp := get(t, webui.Embedded(), "GET", "/", "Accept-Encoding", "gzip")
	require.Equal(t, http.StatusOK, resp.StatusCode)
	zr, err := gzip.NewReader(resp.Body)
	require.NoError(t, err)
	html, err := io.ReadAll(zr)
	require.NoError(t, err)
	assert.True(t, bytes.Contains(bytes.ToLower(html), []byte("<!doctype html>")))
	assert.NotContains(t, string(html), "<script>", "no inline script: the CSP would block it")
	assert.NotContains(t, string(html), " style=", "no inline style attribute: the CSP would block it")
}
