package cli

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"flag"
	"fmt"
	"os"

	"github.com/runedge/runedge/plugins/signature"
)

// pluginKeygen writes a new ed25519 signing key (PKCS #8 PEM, 0600) and
// prints its public key as plugins.trusted_keys wants it.
func pluginKeygen(args []string, env Env) error {
	fs := flag.NewFlagSet("plugin keygen", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	out := fs.String("o", "", "file to write the private key to (required; never overwritten)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return errors.New("-o FILE is required")
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	der, err := x509.MarshalPKCS8PrivateKey(priv)
	if err != nil {
		return err
	}
	f, err := os.OpenFile(*out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if err := errors.Join(pem.Encode(f, &pem.Block{Type: "PRIVATE KEY", Bytes: der}), f.Close()); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "wrote %s; trust it with\n\nplugins:\n  trusted_keys: [%q]\n", *out, signature.FormatKey(pub))
	return nil
}

// pluginSign writes FILE.sig, the signature of a plugin file with a key
// made by pluginKeygen.
func pluginSign(args []string, env Env) error {
	fs := flag.NewFlagSet("plugin sign", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	keyFile := fs.String("key", "", "the private key (plugin keygen)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *keyFile == "" || fs.NArg() != 1 {
		return errors.New("want `plugin sign --key KEY FILE`")
	}
	priv, err := readSigningKey(*keyFile)
	if err != nil {
		return err
	}
	wasm, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		return err
	}
	sum := sha256.Sum256(wasm)
	sig, err := signature.Sign(priv, hex.EncodeToString(sum[:]))
	if err != nil {
		return err
	}
	out := fs.Arg(0) + ".sig"
	if err := os.WriteFile(out, []byte(sig+"\n"), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "wrote %s\n", out)
	return nil
}

func readSigningKey(path string) (ed25519.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(b)
	if block == nil {
		return nil, fmt.Errorf("%s: no PEM block", path)
	}
	k, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	priv, ok := k.(ed25519.PrivateKey)
	if !ok {
		return nil, fmt.Errorf("%s: not an ed25519 key", path)
	}
	return priv, nil
}
