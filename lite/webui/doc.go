// Package webui serves agnx-lite's web page: the files of the folder
// assets/, embedded in the binary (Embedded), or any fs.FS (New, for
// tests). It knows nothing of the API the page calls; lite/httpapi routes
// GET / and GET /ui/{file...} to it, so the API's Host and Origin checks
// apply to the page too.
//
// Each file is read, hashed and, when that makes it smaller, gzipped once,
// on its first request, and kept: the folder is at most 200 KB, so the
// copies cost less than compressing on every request would on a Pi. Every
// answer carries a strict Content-Security-Policy (no inline script or
// style, no eval, nothing from another origin), nosniff, no-referrer and
// DENY framing; Cache-Control is no-cache with a strong ETag, so a browser
// revalidates and gets 304 until the binary changes. The assets hold no
// conversation content: that comes from the API, which says no-store.
//
// webui imports only the standard library.
package webui
