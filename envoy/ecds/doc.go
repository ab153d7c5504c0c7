// Package ecds carries runedge's chain configuration from the control
// plane (`runedge xds`) to the hosts (`runedge serve --xds`) as ECDS
// resources: one TypedExtensionConfig per endpoint, named
// "runedge.chain.<endpoint>", whose typed config is a
// google.protobuf.Struct of the endpoint's plugin references (stage →
// {url, sha256}).
//
// The control plane builds resources with Encode. A host runs Subscribe:
// it asks the control plane over ADS for every chain, fetches each plugin
// from its URL, checks the bytes against the SHA-256, keeps them in a
// local cache and hands the chains to an apply function — the host's live
// swap. A chain set the host applied is ACKed; one it could not fetch,
// verify or apply is NACKed with the reason, and the host keeps running
// what it had.
package ecds
