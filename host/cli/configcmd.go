package cli

import (
	"errors"
	"flag"
	"fmt"

	"github.com/runedge/runedge/plugins/runtime"
)

func configCmd(args []string, env Env) error {
	if len(args) == 0 || args[0] != "check" {
		return errors.New("want `config check --config FILE`")
	}
	fs := flag.NewFlagSet("config check", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	path := fs.String("config", "", "configuration file")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if *path == "" {
		return errors.New("--config is required")
	}
	cfg, err := loadConfig(*path, env)
	if err != nil {
		return err
	}
	if err := runtime.CheckCacheDir(cfg.Path(cfg.Plugins.CacheDir)); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "%s: ok\n", *path)
	return nil
}
