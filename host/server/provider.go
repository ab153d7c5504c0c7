package server

import (
	"fmt"
	"os"

	"github.com/runedge/runedge/host/config"
	"github.com/runedge/runedge/runner/provider/openai"
)

// newOpenAI builds the openai provider. The key is read from the
// environment here, once, at start: a missing variable fails the start
// naming the field, instead of every run failing later with a 401.
func newOpenAI(o config.OpenAI) (*openai.Provider, error) {
	var key string
	if o.APIKeyEnv != "" {
		if key = os.Getenv(o.APIKeyEnv); key == "" {
			return nil, fmt.Errorf("provider.openai.api_key_env: environment variable %s is not set or empty", o.APIKeyEnv)
		}
	}
	p, err := openai.New(openai.Config{
		BaseURL:          o.BaseURL,
		APIKey:           key,
		Model:            o.Model,
		IncludeUsage:     o.IncludeUsage,
		ConnectTimeout:   o.ConnectTimeout.Std(),
		FirstByteTimeout: o.FirstByteTimeout.Std(),
		IdleTimeout:      o.IdleTimeout.Std(),
		MaxAttempts:      o.MaxAttempts,
		BackoffBase:      o.BackoffBase.Std(),
		BackoffMax:       o.BackoffMax.Std(),
	})
	if err != nil {
		return nil, fmt.Errorf("provider.openai: %w", err)
	}
	return p, nil
}
