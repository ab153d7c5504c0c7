package compaction

// Setup builds the key ring the stage seals and opens with from its
// configuration, the secrets read from the environment; with no keys
// configured it returns own, the host's key of its own (every generation
// shares it, so a reload keeps items readable; a restart does not).
func Setup(c Config, own *Keys) (*Keys, error) {
	if len(c.Keys) == 0 {
		return own, nil
	}
	secrets := c.Secrets()
	keys := make([]Key, len(secrets))
	for i, k := range c.Keys {
		keys[i] = Key{ID: k.ID, Secret: secrets[i]}
	}
	return NewKeys(keys)
}
