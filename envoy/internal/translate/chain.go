package translate

import (
	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"

	"github.com/runedge/runedge/envoy/ecds"
)

// chainConfig is the ECDS resource a host subscribes to for one endpoint.
func chainConfig(ch Chain) (*core.TypedExtensionConfig, error) {
	return ecds.Encode(ch.Endpoint, ecds.ChainRef{
		MapRequest: ecds.PluginRef{URL: ch.MapRequest.URL, SHA256: ch.MapRequest.SHA256, Signature: ch.MapRequest.Signature},
		Translate:  ecds.PluginRef{URL: ch.Translate.URL, SHA256: ch.Translate.SHA256, Signature: ch.Translate.Signature},
	})
}
