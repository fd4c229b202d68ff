package webaddr

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseProxy(t *testing.T) {
	for in, want := range map[string]string{"127.0.0.1": "127.0.0.1/32", "10.0.0.0/8": "10.0.0.0/8", "10.1.2.3/8": "10.0.0.0/8",
		"::1": "::1/128", "fd00::/8": "fd00::/8", "::ffff:10.0.0.0/104": "10.0.0.0/8", " 192.0.2.1 ": "192.0.2.1/32"} {
		p, ok := ParseProxy(in)
		require.True(t, ok, in)
		assert.Equal(t, want, p.String(), in)
	}
	for _, in := range []string{"", "0.0.0.0/0", "::/0", "pi.local", "10.0.0.0/33", "http://10.0.0.1", "::ffff:0:0/90"} {
		_, ok := ParseProxy(in)
		assert.False(t, ok, in)
	}
}
