package ecds

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"

	core "github.com/envoyproxy/go-control-plane/envoy/config/core/v3"
	"google.golang.org/protobuf/types/known/anypb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/runedge/runedge/internal/contract"
)

// NamePrefix starts the name of every chain resource; the endpoint
// follows: "runedge.chain.chat.completions", "runedge.chain.responses".
const NamePrefix = "runedge.chain."

// Stage names inside a chain resource, the same as the keys of a chain in
// a host's configuration file (internal/contract).
const (
	StageMapRequest = contract.ChainKeyMapRequest
	StageTranslate  = contract.ChainKeyTranslate
)

// TypeURL is the type of the chain resources, as a host subscribes to them:
// go-control-plane's resource.ExtensionConfigType, written out here so that
// the hosts (`runedge serve --xds`) do not link go-control-plane's resource
// package and the control plane behind it (envoy/server's
// TestTypeURLIsGoControlPlanes keeps the two equal).
const TypeURL = "type.googleapis.com/envoy.config.core.v3.TypedExtensionConfig"

var sha256RE = regexp.MustCompile(`^[0-9a-f]{64}$`)

// ChainRef is one endpoint's chain as the control plane publishes it.
type ChainRef struct {
	MapRequest PluginRef
	Translate  PluginRef
}

// PluginRef is where a plugin's bytes are and what they must hash to.
type PluginRef struct {
	URL    string
	SHA256 string // lowercase hex
	// Signature is the plugin's ed25519 signature (plugins/signature),
	// empty when unsigned. A host with trusted keys refuses a plugin
	// whose signature is missing or not from one of them.
	Signature string
	// Path is the local file holding the verified bytes. The subscriber
	// sets it before calling apply; it is not on the wire.
	Path string
}

// Encode makes the ECDS resource of endpoint's chain. The typed config is
// a google.protobuf.Struct rather than a message of our own: hosts and
// tools decode it without generated code, and any xDS client can carry it.
//
//	name: runedge.chain.chat.completions
//	typed_config:
//	  "@type": type.googleapis.com/google.protobuf.Struct
//	  map_request: {url: http://xds:18001/plugins/<sha256>, sha256: <sha256>}
//	  translate:   {url: ..., sha256: ..., signature: <base64>}   # signature only when signed
func Encode(endpoint string, c ChainRef) (*core.TypedExtensionConfig, error) {
	s, err := structpb.NewStruct(map[string]any{
		StageMapRequest: c.MapRequest.fields(),
		StageTranslate:  c.Translate.fields(),
	})
	if err != nil {
		return nil, err
	}
	a, err := anypb.New(s)
	if err != nil {
		return nil, err
	}
	res := &core.TypedExtensionConfig{Name: NamePrefix + endpoint, TypedConfig: a}
	if _, _, err := Decode(res); err != nil {
		return nil, err
	}
	return res, nil
}

// Decode reads a chain resource back, refusing anything a host could not
// apply as written: a resource that is not a chain, an unknown stage, a
// missing stage, a URL that is not http(s), a digest that is not SHA-256.
func Decode(res *core.TypedExtensionConfig) (endpoint string, c ChainRef, err error) {
	endpoint, ok := strings.CutPrefix(res.GetName(), NamePrefix)
	if !ok || endpoint == "" {
		return "", c, fmt.Errorf("ecds: %q is not a chain resource (want %s<endpoint>)", res.GetName(), NamePrefix)
	}
	s := &structpb.Struct{}
	if err := res.GetTypedConfig().UnmarshalTo(s); err != nil {
		return "", c, fmt.Errorf("ecds %s: typed_config: want google.protobuf.Struct: %w", res.GetName(), err)
	}
	var errs []error
	for _, k := range slices.Sorted(maps.Keys(s.GetFields())) {
		if k != StageMapRequest && k != StageTranslate {
			errs = append(errs, fmt.Errorf("unknown stage %q", k))
		}
	}
	c.MapRequest, err = plugin(s, StageMapRequest)
	errs = append(errs, err)
	c.Translate, err = plugin(s, StageTranslate)
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return "", ChainRef{}, fmt.Errorf("ecds %s: %w", res.GetName(), err)
	}
	return endpoint, c, nil
}

func (p PluginRef) fields() map[string]any {
	m := map[string]any{"url": p.URL, "sha256": p.SHA256}
	if p.Signature != "" {
		m["signature"] = p.Signature
	}
	return m
}

func plugin(s *structpb.Struct, stage string) (PluginRef, error) {
	v, ok := s.GetFields()[stage]
	if !ok {
		return PluginRef{}, fmt.Errorf("%s: missing", stage)
	}
	f := v.GetStructValue().GetFields()
	p := PluginRef{URL: f["url"].GetStringValue(), SHA256: f["sha256"].GetStringValue(), Signature: f["signature"].GetStringValue()}
	if u, err := url.Parse(p.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return PluginRef{}, fmt.Errorf("%s.url: want an http(s) URL, got %q", stage, p.URL)
	}
	if !sha256RE.MatchString(p.SHA256) {
		return PluginRef{}, fmt.Errorf("%s.sha256: want 64 lowercase hex digits, got %q", stage, p.SHA256)
	}
	return p, nil
}
