package cli

import (
	"bufio"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/runedge/runedge/filters/auth"
)

func token(args []string, env Env) error {
	if len(args) == 0 {
		return errors.New("want `token new` or `token hash [TOKEN]`")
	}
	switch args[0] {
	case "new":
		tok, err := newToken()
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "token: %s\nhash:  %s\n", tok, hashToken(tok))
		return nil
	case "hash":
		tok := ""
		if len(args) > 1 {
			tok = args[1]
		} else {
			line, err := bufio.NewReader(os.Stdin).ReadString('\n')
			if err != nil && line == "" {
				return fmt.Errorf("reading the token from stdin: %w", err)
			}
			tok = line
		}
		tok = strings.TrimSpace(tok)
		if tok == "" {
			return errors.New("empty token")
		}
		fmt.Fprintln(env.Stdout, hashToken(tok))
		return nil
	}
	return fmt.Errorf("unknown subcommand %q (want new or hash)", args[0])
}

// newToken returns a random token with a recognisable prefix.
func newToken() (string, error) {
	return "rk_" + rand.Text(), nil
}

func hashToken(tok string) string { return auth.HashToken(tok) }
