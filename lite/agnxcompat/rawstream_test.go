package agnxcompat

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// rawStream is a POST …/stream over a plain HTTP/1.1 connection, read
// chunk by chunk: each HTTP chunk the server flushed is one network chunk,
// as hyper hands them to the parent's parser (Go's client would merge
// buffered chunks and hide a split UTF-8 character).
type rawStream struct {
	conn      net.Conn
	br        *bufio.Reader
	Status    int
	Header    http.Header
	chunked   bool
	remaining int64 // Content-Length left; -1: until EOF
}

// openStream posts body to path and reads the status line and headers.
// extra headers are added as given.
func (c *apiClient) openStream(path string, body []byte, extra map[string]string) (*rawStream, error) {
	u, err := url.Parse(c.base)
	if err != nil {
		return nil, err
	}
	conn, err := net.DialTimeout("tcp", u.Host, 5*time.Second)
	if err != nil {
		return nil, err
	}
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	var b strings.Builder
	fmt.Fprintf(&b, "POST %s HTTP/1.1\r\nHost: %s\r\n", path, u.Host)
	h := http.Header{}
	c.headers(h, "application/json")
	for k, v := range extra {
		h.Set(k, v)
	}
	for k, vs := range h {
		for _, v := range vs {
			if v != "" {
				fmt.Fprintf(&b, "%s: %s\r\n", k, v)
			}
		}
	}
	fmt.Fprintf(&b, "Content-Length: %d\r\n\r\n", len(body))
	if _, err := io.WriteString(conn, b.String()+string(body)); err != nil {
		conn.Close()
		return nil, err
	}
	s := &rawStream{conn: conn, br: bufio.NewReader(conn), remaining: -1}
	tp := textproto.NewReader(s.br)
	line, err := tp.ReadLine()
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("reading the status line: %w", err)
	}
	parts := strings.SplitN(line, " ", 3)
	if len(parts) < 2 {
		conn.Close()
		return nil, fmt.Errorf("bad status line %q", line)
	}
	if s.Status, err = strconv.Atoi(parts[1]); err != nil {
		conn.Close()
		return nil, fmt.Errorf("bad status line %q", line)
	}
	mh, err := tp.ReadMIMEHeader()
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("reading headers: %w", err)
	}
	s.Header = http.Header(mh)
	s.chunked = strings.EqualFold(s.Header.Get("Transfer-Encoding"), "chunked")
	if cl := s.Header.Get("Content-Length"); cl != "" && !s.chunked {
		s.remaining, _ = strconv.ParseInt(cl, 10, 64)
	}
	return s, nil
}

// nextChunk returns the next network chunk; io.EOF at the end of the body.
func (s *rawStream) nextChunk() ([]byte, error) {
	if s.chunked {
		line, err := s.br.ReadString('\n')
		if err != nil {
			return nil, err
		}
		sizeText, _, _ := strings.Cut(strings.TrimSpace(line), ";")
		size, err := strconv.ParseInt(sizeText, 16, 64)
		if err != nil {
			return nil, fmt.Errorf("bad chunk size line %q", line)
		}
		if size == 0 {
			return nil, io.EOF
		}
		buf := make([]byte, size+2)
		if _, err := io.ReadFull(s.br, buf); err != nil {
			return nil, err
		}
		return buf[:size], nil
	}
	if s.remaining == 0 {
		return nil, io.EOF
	}
	buf := make([]byte, 4096)
	if s.remaining > 0 && s.remaining < int64(len(buf)) {
		buf = buf[:s.remaining]
	}
	n, err := s.br.Read(buf)
	if s.remaining > 0 {
		s.remaining -= int64(n)
	}
	return buf[:n], err
}

// readAll reads the rest of the body.
func (s *rawStream) readAll() ([]byte, error) {
	var out []byte
	for {
		c, err := s.nextChunk()
		out = append(out, c...)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

// Close drops the connection: the CLI's hang-up.
func (s *rawStream) Close() error { return s.conn.Close() }

// streamMessage is stream_message: 2xx ⇒ the stream (the caller consumes
// and closes it), else the parsed error.
func (c *apiClient) streamMessage(id, content, query string) (*rawStream, error) {
	path := "/api/v1/sessions/" + id + "/stream" + query
	s, err := c.openStream(path, serdeJSON(sendMessageRequest{Content: content}), nil)
	if err != nil {
		return nil, err
	}
	if !success(s.Status) {
		defer s.Close()
		b, _ := s.readAll()
		return nil, parseError(httpResult{Status: s.Status, Header: s.Header, Body: b})
	}
	return s, nil
}
