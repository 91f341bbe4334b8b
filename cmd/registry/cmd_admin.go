package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/store"
)

// openStore opens the data directory named by --data / REGISTRY_DATA without taking it:
// SQLite's WAL mode lets a second process read and commit beside `registry serve`, so the
// commands that only do that (token, pin, backup) run while it does.
func openStore(ctx context.Context, c *cli, fs *flag.FlagSet, args []string) (*store.Store, []string, int) {
	data := fs.String("data", envDefault(c, "REGISTRY_DATA", "./data"), "data directory (REGISTRY_DATA)")
	pos, err := parse(fs, args)
	if err != nil {
		return nil, nil, exitUsage
	}
	if _, err := os.Stat(filepath.Join(*data, store.DBFile)); err != nil {
		fmt.Fprintf(c.stderr, "%s: no registry database in %s (set --data or REGISTRY_DATA to the directory `registry serve` uses)\n", fs.Name(), *data)
		return nil, nil, exitUsage
	}
	st, err := store.Open(ctx, *data)
	if err != nil {
		fmt.Fprintf(c.stderr, "%s: %v\n", fs.Name(), err)
		return nil, nil, exitUsage
	}
	return st, pos, exitOK
}

// cmdToken is `registry token create|list|revoke`.
func cmdToken(ctx context.Context, c *cli, args []string) int {
	const line = "registry token create --publisher NAME [--expires 90d] [--note TEXT] | token list | token revoke ID  [--data DIR]"
	if len(args) == 0 {
		fmt.Fprintf(c.stderr, "usage: %s\n%s\n", line, besideServe)
		return exitUsage
	}
	fs := c.flags("token " + args[0])
	usageNote(fs, line, besideServe)
	switch args[0] {
	case "create":
		publisher := fs.String("publisher", "", "publisher name (as in plugins.yaml owners)")
		expires := fs.String("expires", "", "lifetime such as 90d or 720h; empty for none")
		note := fs.String("note", "", "what the token is for")
		st, _, code := openStore(ctx, c, fs, args[1:])
		if code != exitOK {
			return code
		}
		defer st.Close()
		return tokenCreate(ctx, c, st, *publisher, *expires, *note)
	case "list":
		asJSON := fs.Bool("json", false, "print JSON")
		st, _, code := openStore(ctx, c, fs, args[1:])
		if code != exitOK {
			return code
		}
		defer st.Close()
		return tokenList(ctx, c, st, *asJSON)
	case "revoke":
		st, pos, code := openStore(ctx, c, fs, args[1:])
		if code != exitOK {
			return code
		}
		defer st.Close()
		if len(pos) != 1 {
			fmt.Fprintln(c.stderr, "usage: registry token revoke ID")
			return exitUsage
		}
		err := st.RevokeToken(ctx, pos[0], store.AuditEntry{Actor: "cli", Action: "token.revoke", Target: pos[0], Outcome: "ok"})
		if errors.Is(err, store.ErrNotFound) {
			fmt.Fprintf(c.stderr, "token revoke: no live token with id %s (see `registry token list`)\n", pos[0])
			return exitInvalid
		}
		if err != nil {
			fmt.Fprintf(c.stderr, "token revoke: %v\n", err)
			return exitUsage
		}
		fmt.Fprintf(c.stdout, "revoked token %s\n", pos[0])
		return exitOK
	}
	fmt.Fprintf(c.stderr, "token: unknown action %q (create, list or revoke)\n", args[0])
	return exitUsage
}

func tokenCreate(ctx context.Context, c *cli, st *store.Store, publisher, expires, note string) int {
	if publisher == "" {
		fmt.Fprintln(c.stderr, "token create: --publisher is required (the name plugins.yaml lists under owners)")
		return exitUsage
	}
	ttl, err := parseLifetime(expires)
	if err != nil {
		fmt.Fprintf(c.stderr, "token create: --expires %q: %v\n", expires, err)
		return exitUsage
	}
	secret, t, err := ingest.CreateToken(ctx, st, ingest.TokenSpec{Kind: "publisher", Publisher: publisher, Note: note, TTL: ttl}, "cli")
	if err != nil {
		fmt.Fprintf(c.stderr, "token create: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(c.stderr, "Created token %s for publisher %q. It is shown once; store it as a CI secret (REGISTRY_TOKEN).\n", t.ID, publisher)
	fmt.Fprintln(c.stdout, secret)
	return exitOK
}

// parseLifetime accepts Go durations and whole days ("90d").
func parseLifetime(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	if d, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(d)
		if err != nil || n <= 0 {
			return 0, fmt.Errorf("expected a positive number of days such as 90d")
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("expected a lifetime such as 90d or 720h")
	}
	return d, nil
}

func tokenList(ctx context.Context, c *cli, st *store.Store, asJSON bool) int {
	toks, err := st.Tokens(ctx)
	if err != nil {
		fmt.Fprintf(c.stderr, "token list: %v\n", err)
		return exitUsage
	}
	if asJSON {
		return writeJSON(c.stdout, toks)
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tKIND\tPUBLISHER\tCREATED\tEXPIRES\tSTATE")
	for _, t := range toks {
		exp, state := "never", "active"
		if t.ExpiresAt != nil {
			exp = t.ExpiresAt.Format(time.RFC3339)
			if time.Now().After(*t.ExpiresAt) {
				state = "expired"
			}
		}
		if t.RevokedAt != nil {
			state = "revoked"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Kind, t.Publisher, t.CreatedAt.Format(time.RFC3339), exp, state)
	}
	_ = tw.Flush()
	return exitOK
}

func writeJSON(w io.Writer, v any) int {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return exitUsage
	}
	return exitOK
}

// cmdPin is `registry pin show ID` and `registry pin reset ID`.
func cmdPin(ctx context.Context, c *cli, args []string) int {
	const line = "registry pin show|reset ID [--data DIR]"
	if len(args) == 0 || (args[0] != "show" && args[0] != "reset") {
		fmt.Fprintf(c.stderr, "usage: %s\n%s\n", line, besideServe)
		return exitUsage
	}
	fs := c.flags("pin " + args[0])
	usageNote(fs, line, besideServe)
	st, pos, code := openStore(ctx, c, fs, args[1:])
	if code != exitOK {
		return code
	}
	defer st.Close()
	if len(pos) != 1 {
		fmt.Fprintf(c.stderr, "usage: registry pin %s ID\n", args[0])
		return exitUsage
	}
	id := pos[0]
	pin, err := st.GetPin(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		fmt.Fprintf(c.stderr, "pin: %s has no pinned identity yet (it is pinned by its first verified release)\n", id)
		return exitInvalid
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "pin: %v\n", err)
		return exitUsage
	}
	if args[0] == "show" {
		return writeJSON(c.stdout, pin)
	}
	audit := store.AuditEntry{Actor: "cli", Action: "pin.reset", Target: id, Outcome: "ok",
		Detail: map[string]any{"repository": pin.Repository, "repository_id": pin.RepositoryID, "owner_id": pin.OwnerID}}
	if err := st.DeletePin(ctx, id, audit); err != nil {
		fmt.Fprintf(c.stderr, "pin reset: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(c.stdout, "reset the pin of %s (was %s, repository id %s, owner id %s); its next verified release pins again\n",
		id, pin.Repository, pin.RepositoryID, pin.OwnerID)
	return exitOK
}

// cmdBackup is `registry backup --data DIR --out FILE`: an online, consistent snapshot.
func cmdBackup(ctx context.Context, c *cli, args []string) int {
	fs := c.flags("backup")
	usageNote(fs, "registry backup [--data DIR] --out FILE", besideServe)
	out := fs.String("out", "", "snapshot file to write (must not exist)")
	st, _, code := openStore(ctx, c, fs, args)
	if code != exitOK {
		return code
	}
	defer st.Close()
	if *out == "" {
		fmt.Fprintln(c.stderr, "backup: --out FILE is required")
		return exitUsage
	}
	if err := st.Backup(ctx, *out); err != nil {
		fmt.Fprintf(c.stderr, "backup: %v\n", err)
		return exitInvalid
	}
	fmt.Fprintf(c.stdout, "wrote %s; blobs are content-addressed: copy %s alongside it\n", *out, filepath.Join(st.Dir(), "blobs"))
	return exitOK
}

// cmdRestore is `registry restore --data DIR FILE`: put a snapshot in place of the database
// of a stopped registry. It takes the data directory as serve does, so it refuses while a
// registry serves from it, and a registry cannot start on it mid-restore.
func cmdRestore(ctx context.Context, c *cli, args []string) int {
	fs := c.flags("restore")
	usageNote(fs, "registry restore [--data DIR] [--force] SNAPSHOT", restoreNote)
	data := fs.String("data", envDefault(c, "REGISTRY_DATA", "./data"), "data directory (REGISTRY_DATA)")
	force := fs.Bool("force", false, "replace an existing database")
	pos, err := parse(fs, args)
	if err != nil || len(pos) != 1 {
		fmt.Fprintf(c.stderr, "usage: registry restore [--data DIR] [--force] SNAPSHOT\n%s\n", restoreNote)
		return exitUsage
	}
	if err := restore(ctx, c, *data, pos[0], *force); err != nil {
		fmt.Fprintf(c.stderr, "restore: %v\n", err)
		return exitInvalid
	}
	return exitOK
}

func restore(ctx context.Context, c *cli, dir, snapshot string, force bool) error {
	lock, err := lockDataDir(dir, "restoring into it")
	if err != nil {
		return err
	}
	defer lock.Close()
	dst := filepath.Join(dir, store.DBFile)
	if _, err := os.Stat(dst); err == nil && !force {
		return fmt.Errorf("%s exists; stop the registry and pass --force to replace it", dst)
	}
	src, err := os.ReadFile(snapshot)
	if err != nil {
		return err
	}
	tmp := dst + ".restore"
	if err := os.WriteFile(tmp, src, 0o640); err != nil {
		return err
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		_ = os.Remove(dst + suffix)
	}
	if err := os.Rename(tmp, dst); err != nil {
		return err
	}
	st, err := store.Open(ctx, dir)
	if err != nil {
		return fmt.Errorf("the snapshot does not open as a registry database: %w", err)
	}
	defer st.Close()
	missing, err := st.MissingBlobs(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(c.stdout, "restored %s into %s\n", snapshot, dst)
	if len(missing) > 0 {
		fmt.Fprintf(c.stdout, "warning: %d blob(s) the database lists are missing from %s; copy the blobs folder from the backup\n",
			len(missing), filepath.Join(dir, "blobs"))
	}
	return nil
}

// Help notes on which commands may share a data directory with `registry serve`.
const (
	besideServe = "Safe to run while `registry serve` uses the same data directory: it only opens the database."
	restoreNote = "Refuses while `registry serve` (or another restore) holds the data directory: stop the registry first."
)

// lockDataDir takes the data directory for this process (serve, restore), or says which
// process holds it; before says what the holder must be stopped for.
func lockDataDir(dir, before string) (*store.DirLock, error) {
	l, err := store.LockDir(dir)
	if errors.Is(err, store.ErrLocked) {
		return nil, fmt.Errorf("--data %s: %w; stop it before %s", dir, err, before)
	}
	if err != nil {
		return nil, fmt.Errorf("--data %s: %w", dir, err)
	}
	return l, nil
}
