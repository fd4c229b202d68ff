package llm

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestIsObject(t *testing.T) {
	assert.True(t, IsObject(` {"a":1} `))
	assert.True(t, IsObject([]byte(`{}`)))
	assert.False(t, IsObject(`[1]`))
	assert.False(t, IsObject(`{"a":`))
	assert.False(t, IsObject(``))
	assert.False(t, IsObject(`{} {}`))
}
