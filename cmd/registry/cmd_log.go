package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/pluginyard/registry/store"
	"github.com/pluginyard/registry/translog"
)

// logCommand is one `registry log` subcommand.
type logCommand struct {
	run   func(ctx context.Context, c *cli, args []string) int
	usage string
	about string
}

// logCommands is the dispatch table of `registry log`; each subcommand lives in its own
// cmd_log_*.go file (verify: cmd_log_verify.go).
func logCommands() map[string]logCommand {
	return map[string]logCommand{
		"key":    {cmdLogKey, logKeyUsage, logKeyAbout},
		"verify": {cmdLogVerify, logVerifyUsage, logVerifyAbout},
	}
}

func logHelp() help {
	cmds := logCommands()
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	var usage, about []string
	for _, n := range names {
		usage = append(usage, cmds[n].usage)
		about = append(about, "registry log "+n+": "+cmds[n].about)
	}
	return help{
		Summary: "the registry's transparency log: print its key, or audit a registry or mirror",
		Usage:   strings.Join(usage, "\n"),
		About:   strings.Join(about, "\n\n") + "\n\nRun `registry log SUBCOMMAND -h` for its flags.",
		Example: "registry log key --data /var/lib/registry\nregistry log verify --registry https://plugins.example.com --key \"$(cat registry-log.pub)\" --state audit.json",
	}
}

// cmdLog is `registry log SUBCOMMAND`.
func cmdLog(ctx context.Context, c *cli, args []string) int {
	cmds := logCommands()
	if len(args) == 0 {
		return c.usageError("log", "expected a subcommand: key or verify")
	}
	if isHelp(args[0]) {
		printHelp(c.stdout, "log", logHelp())
		return exitOK
	}
	sub, ok := cmds[args[0]]
	if !ok {
		return c.usageError("log", "unknown subcommand %q; want key or verify", args[0])
	}
	return sub.run(ctx, c, args[1:])
}

const logKeyUsage = "registry log key [--data DIR] [--log-key KEY|FILE] [--public-url URL]"

const logKeyAbout = `Prints the verifier key the registry signs its log checkpoints with
(NAME+HASH+BASE64, the signed-note format): the key hosts, mirrors and auditors pin. It reads
the private key from --log-key (REGISTRY_LOG_KEY: the key itself or a file holding it) or from
DIR/log.key; when neither exists it creates DIR/log.key (mode 0600) as ` + "`registry serve`" + `
would, named after --public-url, so the key can be pinned before the first start. It never
prints the private key.
Exit status: 0 when printed, 1 when there is no key and no --public-url to name a new one,
2 on usage or I/O errors.`

// cmdLogKey is `registry log key`: print the checkpoint verifier key.
func cmdLogKey(_ context.Context, c *cli, args []string) int {
	fl := c.flags("log key")
	dir := fl.String("data", envDefault(c, "REGISTRY_DATA", "./data"), "data `DIR`ectory holding log.key (REGISTRY_DATA)")
	given := fl.String("log-key", envDefault(c, "REGISTRY_LOG_KEY", ""), "the private log key itself, or a `FILE` holding it (REGISTRY_LOG_KEY); default DIR/log.key")
	publicURL := fl.String("public-url", envDefault(c, "REGISTRY_PUBLIC_URL", ""), "public `URL` of the registry, naming a key created now (REGISTRY_PUBLIC_URL)")
	pos, err := parse(fl, args)
	if err != nil {
		return parseExit(err)
	}
	if len(pos) > 0 {
		return c.usageError("log key", "expected no argument, found %q", strings.Join(pos, " "))
	}
	if *given == "" && *publicURL == "" {
		if _, err := os.Stat(filepath.Join(*dir, translog.KeyFile)); errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(c.stderr, "registry log key: %s has no %s yet: start `registry serve --data %s` once, or pass --public-url URL to create it now\n",
				*dir, translog.KeyFile, *dir)
			return exitInvalid
		}
	}
	if err := os.MkdirAll(*dir, 0o750); err != nil && *given == "" {
		fmt.Fprintf(c.stderr, "registry log key: %v\n", err)
		return exitUsage
	}
	key, err := translog.LoadKey(*dir, strings.TrimSpace(*given), translog.KeyName(*publicURL))
	if err != nil {
		fmt.Fprintf(c.stderr, "registry log key: %v\n", err)
		return exitUsage
	}
	fmt.Fprintln(c.stdout, key.VerifierKey)
	return exitOK
}

// openTransparencyLog loads the checkpoint key (--log-key, or DATA/log.key, generated on
// first start) and signs a checkpoint after every commit that grows the log; a failed
// signing is logged and retried by the next read of the checkpoint.
func openTransparencyLog(ctx context.Context, cfg Config, st *store.Store, log *slog.Logger) (*translog.Log, error) {
	key, err := translog.LoadKey(cfg.DataDir, strings.TrimSpace(cfg.LogKey), translog.KeyName(cfg.PublicURL))
	if err != nil {
		return nil, fmt.Errorf("--log-key: %w", err)
	}
	tl := translog.New(st, key)
	bg := context.WithoutCancel(ctx)
	st.OnLogAppend(func() {
		if _, err := tl.Checkpoint(bg); err != nil {
			log.Warn("log checkpoint not signed; the next read of /log/checkpoint retries", "err", err)
		}
	})
	if _, err := tl.Checkpoint(ctx); err != nil {
		return nil, err
	}
	log.Info("transparency log", "origin", key.Signer.Name(), "verifier_key", key.VerifierKey)
	return tl, nil
}
