package admin

import (
	"github.com/runedge/runedge/filters"
	"github.com/runedge/runedge/filters/apierr"
	"github.com/runedge/runedge/plugins/signature"
)

// SignatureHeader carries a plugin's ed25519 signature (plugins/signature)
// on an admin swap.
const SignatureHeader = "X-Runedge-Plugin-Signature"

// checkSignature refuses a plugin sent to the admin API that is not signed
// by a key of plugins.trusted_keys, when there are any. It runs before the
// plugin is stored or loaded: an admin token alone is then not enough to
// run code in every tenant's requests.
func (a *Admin) checkSignature(x *filters.Exchange, sha256Hex string) error {
	if len(a.cfg.Plugins.TrustedKeys) == 0 {
		return nil
	}
	keys, err := signature.ParseKeys(a.cfg.Plugins.TrustedKeys) // checked at load; cheap
	if err == nil {
		err = signature.Verify(keys, sha256Hex, x.Request.Header.Get(SignatureHeader))
	}
	if err != nil {
		return apierr.New(apierr.CodePluginNotTrusted, "plugin "+sha256Hex+" is not signed by a key in plugins.trusted_keys (send its signature in "+SignatureHeader+")")
	}
	return nil
}
