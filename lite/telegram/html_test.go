package telegram

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/agnx-lite/agnx-lite/lite/telegram/tgtest"
)

func TestHTML(t *testing.T) {
	cases := []struct{ name, md, want string }{
		{"plain", "hello", "hello"},
		{"escaped", "a < b && c > d", "a &lt; b &amp;&amp; c &gt; d"},
		{"bold", "**bold** and __also__", "<b>bold</b> and <b>also</b>"},
		{"italic", "*it* and _it_", "<i>it</i> and <i>it</i>"},
		{"snake case stays", "a_b_c and x_y", "a_b_c and x_y"},
		{"unclosed stays", "**open and *half", "**open and *half"},
		{"strike", "~~gone~~", "<s>gone</s>"},
		{"code", "use `a<b>` now", "use <code>a&lt;b&gt;</code> now"},
		{"code keeps stars", "`**x**`", "<code>**x**</code>"},
		{"link", "[site](https://example.com/?a=1&b=\"2\")", `[site](https://example.com/?a=1&amp;b="2")`},
		{"link ok", "[site](https://example.com/?a=1&b=2)", `<a href="https://example.com/?a=1&amp;b=2">site</a>`},
		{"js link refused", "[x](javascript:alert(1))", "[x](javascript:alert(1))"},
		{"bold in link", "[**b**](http://x.y)", `<a href="http://x.y"><b>b</b></a>`},
		{"heading", "## Title *x*", "<b>Title <i>x</i></b>"},
		{"list", "- one\n* two", "• one\n• two"},
		{"fence lang", "```go\nfmt.Println(\"<hi>\")\n```", "<pre><code class=\"language-go\">fmt.Println(\"&lt;hi&gt;\")</code></pre>"},
		{"fence plain", "```\n**no**\n```\nafter", "<pre>**no**</pre>\nafter"},
		{"fence unclosed", "```py\nx = 1", "<pre><code class=\"language-py\">x = 1</code></pre>"},
		{"fence odd lang", "```a\"b\nx\n```", "<pre>x</pre>"},
		{"no span over lines", "**a\nb**", "**a\nb**"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := HTML(c.md)
			assert.Equal(t, c.want, got)
			require.NoError(t, tgtest.ValidateHTML(got))
		})
	}
}
