package driver

import (
	"testing"

	"github.com/zergrush/zerg/internal/claude"
)

// The sandbox holds a placeholder in the real credential's shape: with a
// subscription token alone, the CLI inside must send the OAuth headers
// (bearer, oauth beta) for the gateway to swap the value only.
func TestPlaceholderShape(t *testing.T) {
	for _, c := range []struct {
		d    Sandbox
		want claude.APISettings
	}{
		{Sandbox{APIKey: "k"}, claude.APISettings{BaseURL: sandboxProxy, APIKey: placeholderKey}},
		{Sandbox{AuthToken: "t"}, claude.APISettings{BaseURL: sandboxProxy, APIKey: placeholderKey}},
		{Sandbox{OAuthToken: "o"}, claude.APISettings{BaseURL: sandboxProxy, OAuthToken: placeholderKey}},
		{Sandbox{APIKey: "k", OAuthToken: "o"}, claude.APISettings{BaseURL: sandboxProxy, APIKey: placeholderKey}},
	} {
		if got := c.d.placeholderAPI(); got != c.want {
			t.Errorf("%+v: %s, want %s", c.d, got, c.want)
		}
	}
}
