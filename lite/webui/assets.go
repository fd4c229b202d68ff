package webui

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"
	"sync"
)

//go:embed assets
var embedded embed.FS

// MaxAssetBytes is the budget of the embedded folder, before compression:
// the binary grows by no more than that (a test enforces it).
const MaxAssetBytes = 200 << 10

// maxFileBytes caps one file read from a folder New is given: a file
// larger than the whole budget is not an asset.
const maxFileBytes = MaxAssetBytes

// Index is the asset GET / serves.
const Index = "index.html"

// CSP is the Content-Security-Policy of every answer: the page's own
// scripts, styles, images, fonts and API only; no inline script or style
// attribute, no eval, no framing, no form posted elsewhere.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; " +
	"font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// contentTypes maps the extensions the page uses to their media types;
// other files are served as application/octet-stream.
var contentTypes = map[string]string{
	".html":        "text/html; charset=utf-8",
	".js":          "text/javascript; charset=utf-8",
	".mjs":         "text/javascript; charset=utf-8",
	".css":         "text/css; charset=utf-8",
	".svg":         "image/svg+xml",
	".json":        "application/json",
	".webmanifest": "application/manifest+json",
	".png":         "image/png",
	".ico":         "image/x-icon",
	".woff2":       "font/woff2",
	".txt":         "text/plain; charset=utf-8",
}

// Assets serves the files of one folder. It is safe for concurrent use.
type Assets struct {
	fsys fs.FS
	mu   sync.Mutex
	// files holds the assets served so far, by name; a name that is not
	// an asset is not kept, so the map is bounded by the folder.
	files map[string]*asset
}

// asset is one file as it is served.
type asset struct {
	body, gz    []byte // gz is nil when gzip would not make it smaller
	etag, gzTag string // strong: the content's hash, "-gz" for the gzip one
	ctype       string
}

// New serves the files of fsys; nothing is read until asked for.
func New(fsys fs.FS) *Assets {
	return &Assets{fsys: fsys, files: map[string]*asset{}}
}

// Embedded serves the folder built into the binary.
func Embedded() *Assets { return New(EmbeddedFS()) }

// EmbeddedFS is the folder built into the binary (its files at the root),
// for size checks.
func EmbeddedFS() fs.FS {
	sub, err := fs.Sub(embedded, "assets")
	if err != nil {
		return embedded // cannot happen: "assets" is a valid path, and go:embed made sure it exists
	}
	return sub
}

// Serve answers r with the asset called name ("index.html", "app.js",
// "img/icon.svg"), honouring HEAD, If-None-Match and Accept-Encoding. When
// there is no such asset it returns false having set only the security
// headers, so that the caller's own 404 carries them too.
func (a *Assets) Serve(w http.ResponseWriter, r *http.Request, name string) bool {
	h := w.Header()
	SecurityHeaders(h)
	f := a.load(name)
	if f == nil {
		return false
	}
	h.Set("Cache-Control", "no-cache")
	h.Set("Content-Type", f.ctype)
	h.Add("Vary", "Accept-Encoding")
	body, tag := f.body, f.etag
	if f.gz != nil && acceptsGzip(r.Header.Values("Accept-Encoding")) {
		body, tag = f.gz, f.gzTag
		h.Set("Content-Encoding", "gzip")
	}
	h.Set("ETag", tag)
	if etagMatch(r.Header.Values("If-None-Match"), f.etag, f.gzTag) {
		h.Del("Content-Type")
		h.Del("Content-Encoding")
		w.WriteHeader(http.StatusNotModified)
		return true
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
	return true
}

// SecurityHeaders sets the headers every answer of the web UI carries,
// its 404s included.
func SecurityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", CSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Frame-Options", "DENY")
}

// load returns the asset called name, reading and compressing it on first
// use, or nil when there is none. Names are fs.ValidPath names without
// hidden segments: "..", "/x", "a//b" and ".git/x" are not assets.
func (a *Assets) load(name string) *asset {
	if !validName(name) {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if f, ok := a.files[name]; ok {
		return f
	}
	body, err := readFile(a.fsys, name)
	if err != nil {
		return nil
	}
	f := newAsset(name, body)
	a.files[name] = f
	return f
}

func validName(name string) bool {
	if name == "" || len(name) > 256 || !fs.ValidPath(name) {
		return false
	}
	for _, seg := range strings.Split(name, "/") {
		if strings.HasPrefix(seg, ".") {
			return false
		}
	}
	return true
}

// readFile reads a regular file of at most maxFileBytes.
func readFile(fsys fs.FS, name string) ([]byte, error) {
	st, err := fs.Stat(fsys, name)
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() || st.Size() > maxFileBytes {
		return nil, fs.ErrNotExist
	}
	return fs.ReadFile(fsys, name)
}

func newAsset(name string, body []byte) *asset {
	sum := sha256.Sum256(body)
	tag := base64.RawURLEncoding.EncodeToString(sum[:18])
	f := &asset{body: body, etag: `"` + tag + `"`, gzTag: `"` + tag + `-gz"`, ctype: contentTypes[path.Ext(name)]}
	if f.ctype == "" {
		f.ctype = "application/octet-stream"
	}
	if gz := gzipped(body); len(gz) < len(body) {
		f.gz = gz
	}
	return f
}

func gzipped(body []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	_, _ = zw.Write(body)
	_ = zw.Close()
	return buf.Bytes()
}
