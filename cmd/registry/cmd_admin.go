package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/pluginyard/registry/ingest"
	"github.com/pluginyard/registry/store"
)

// openStore opens the data directory named by --data / REGISTRY_DATA without taking it:
// SQLite's WAL mode lets a second process read and commit beside `registry serve`, so the
// commands that only do that (token, pin, backup) run while it does. It parses args; on a
// parse error or -h the store is nil and the code is parse's.
func openStore(ctx context.Context, c *cli, fs *flag.FlagSet, args []string) (*store.Store, []string, int) {
	st, _, pos, code := openWith(ctx, c, fs, args, false)
	return st, pos, code
}

// openBackends is openStore that also opens the blob store --blobs names (--database and
// --blobs are declared on fs, beside --data).
func openBackends(ctx context.Context, c *cli, fs *flag.FlagSet, args []string) (*store.Store, blobStore, []string, int) {
	return openWith(ctx, c, fs, args, true)
}

// openWith is openStore, and with withBlobs openBackends: the commands that only read and
// write rows do not open (and so probe) a bucket.
func openWith(ctx context.Context, c *cli, fs *flag.FlagSet, args []string, withBlobs bool) (*store.Store, blobStore, []string, int) {
	data := dataFlag(c, fs)
	b := backendFlags(c, fs)
	pos, err := parse(fs, args)
	if err != nil {
		return nil, nil, nil, parseExit(err)
	}
	if msg := b.missingDatabase(*data); msg != "" {
		fmt.Fprintf(c.stderr, "%s: %s\n", fs.Name(), msg)
		return nil, nil, nil, exitUsage
	}
	var (
		st    *store.Store
		blobs blobStore
	)
	if withBlobs {
		st, blobs, err = b.open(ctx, *data)
	} else {
		st, err = b.openMetadata(ctx, *data)
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "%s: %v\n", fs.Name(), err)
		return nil, nil, nil, exitUsage
	}
	return st, blobs, pos, exitOK
}

// dataFlag declares --data (REGISTRY_DATA) on fs.
func dataFlag(c *cli, fs *flag.FlagSet) *string {
	return fs.String("data", envDefault(c, "REGISTRY_DATA", "./data"), "data directory: the `DIR` `registry serve` uses (REGISTRY_DATA)")
}

var tokenHelp = help{
	Summary: "create, list or revoke publisher tokens",
	Usage:   "registry token create --publisher NAME [--expires 90d] [--note TEXT] [--data DIR]\nregistry token list [--json] [--data DIR]\nregistry token revoke ID [--data DIR]",
	About: `create prints a new publisher token on stdout (shown once; it is stored hashed), list
shows every token and its state, revoke ends one at once.
` + besideServe + `
Exit status: 0 when done, 1 when revoke finds no live token with that id, 2 on usage or
I/O errors.`,
	Example: "registry token create --publisher acme --expires 90d --note \"CI of acme/hello\"\nregistry token list\nregistry token revoke tok_0123",
}

// tokenActions are token's actions, in help order.
var tokenActions = []string{"create", "list", "revoke"}

// tokenOptions are the flags of one token action.
type tokenOptions struct {
	publisher, expires, note *string
	asJSON                   *bool
}

// tokenFlags declares the flags of token action (without --data).
func tokenFlags(c *cli, action string) (*flag.FlagSet, tokenOptions) {
	fs := c.flags("token " + action)
	var o tokenOptions
	switch action {
	case "create":
		o.publisher = fs.String("publisher", "", "publisher `NAME` (as in plugins.yaml owners); required")
		o.expires = fs.String("expires", "", "`LIFETIME` such as 90d or 720h; empty for none")
		o.note = fs.String("note", "", "what the token is for (`TEXT`)")
	case "list":
		o.asJSON = fs.Bool("json", false, "print JSON")
	}
	return fs, o
}

// printTokenHelp prints token's help with the flags of every action.
func printTokenHelp(c *cli) int {
	sets := make([]*flag.FlagSet, 0, len(tokenActions))
	for _, a := range tokenActions {
		fs, _ := tokenFlags(c, a)
		dataFlag(c, fs)
		sets = append(sets, fs)
	}
	printHelp(c.stdout, "token", tokenHelp, sets...)
	return exitOK
}

// cmdToken is `registry token create|list|revoke`.
func cmdToken(ctx context.Context, c *cli, args []string) int {
	switch {
	case len(args) == 0:
		return c.usageError("token", "expected an action: create, list or revoke")
	case isHelp(args[0]):
		return printTokenHelp(c)
	case !slices.Contains(tokenActions, args[0]):
		return c.usageError("token", "unknown action %q%s; expected create, list or revoke", args[0], suggest(args[0], tokenActions))
	}
	fs, o := tokenFlags(c, args[0])
	st, pos, code := openStore(ctx, c, fs, args[1:])
	if st == nil {
		return code
	}
	defer st.Close()
	switch args[0] {
	case "create":
		if len(pos) > 0 {
			return c.usageError("token create", "expected no argument, found %q", strings.Join(pos, " "))
		}
		return tokenCreate(ctx, c, st, *o.publisher, *o.expires, *o.note)
	case "list":
		return tokenList(ctx, c, st, *o.asJSON)
	}
	return tokenRevoke(ctx, c, st, pos)
}

func tokenRevoke(ctx context.Context, c *cli, st *store.Store, pos []string) int {
	if len(pos) != 1 {
		return c.usageError("token revoke", "expected one token ID (see `registry token list`), found %d arguments", len(pos))
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

func tokenCreate(ctx context.Context, c *cli, st *store.Store, publisher, expires, note string) int {
	if publisher == "" {
		return c.usageError("token create", "--publisher is required (the name plugins.yaml lists under owners)")
	}
	ttl, err := parseLifetime(expires)
	if err != nil {
		return c.usageError("token create", "--expires %q: %v", expires, err)
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

// maxLifetimeDays is the longest lifetime in days a time.Duration holds (about 292
// years): beyond it the product wraps, and a wrapped (negative) lifetime is one that
// never expires.
const maxLifetimeDays = int64(math.MaxInt64 / (24 * time.Hour))

// parseLifetime accepts Go durations and whole days ("90d"), positive and at most
// maxLifetimeDays.
func parseLifetime(s string) (time.Duration, error) {
	if s == "" {
		return 0, nil
	}
	if d, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.ParseInt(d, 10, 64)
		if err != nil && !(errors.Is(err, strconv.ErrRange) && n > 0) || n <= 0 {
			return 0, fmt.Errorf("expected a positive number of days such as 90d")
		}
		if n > maxLifetimeDays { // ParseInt's range error is here too, with n at MaxInt64
			return 0, fmt.Errorf("at most %dd (about 292 years); give a shorter lifetime, or leave --expires out for a token that never expires", maxLifetimeDays)
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

var pinHelp = help{
	Summary: "show or reset a package's pinned repository identity",
	Usage:   "registry pin show ID [--data DIR]\nregistry pin reset ID [--data DIR]",
	About: `A package is pinned to the GitHub repository id, owner id and workflow of its first verified
Sigstore release; later releases must carry a Sigstore signature from the same ids and
workflow (provenance never downgrades: docs/provenance.md). show prints the pin as JSON;
reset removes it, so that the next release is accepted signed or not and the next verified
one pins again (after a legitimate transfer, re-creation, new workflow, or the end of
signing).
` + besideServe + `
Exit status: 0 when done, 1 when ID has no pin yet, 2 on usage or I/O errors.`,
	Example: "registry pin show acme-hello\nregistry pin reset acme-hello",
}

// cmdPin is `registry pin show ID` and `registry pin reset ID`.
func cmdPin(ctx context.Context, c *cli, args []string) int {
	actions := []string{"show", "reset"}
	switch {
	case len(args) == 0:
		return c.usageError("pin", "expected an action: show or reset")
	case isHelp(args[0]):
		fs := c.flags("pin show")
		dataFlag(c, fs)
		printHelp(c.stdout, "pin", pinHelp, fs)
		return exitOK
	case !slices.Contains(actions, args[0]):
		return c.usageError("pin", "unknown action %q%s; expected show or reset", args[0], suggest(args[0], actions))
	}
	st, pos, code := openStore(ctx, c, c.flags("pin "+args[0]), args[1:])
	if st == nil {
		return code
	}
	defer st.Close()
	if len(pos) != 1 {
		return c.usageError("pin "+args[0], "expected one package ID, found %d arguments", len(pos))
	}
	return pinAction(ctx, c, st, args[0], pos[0])
}

func pinAction(ctx context.Context, c *cli, st *store.Store, action, id string) int {
	pin, err := st.GetPin(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		fmt.Fprintf(c.stderr, "pin: %s has no pinned identity yet (it is pinned by its first verified release)\n", id)
		return exitInvalid
	}
	if err != nil {
		fmt.Fprintf(c.stderr, "pin: %v\n", err)
		return exitUsage
	}
	if action == "show" {
		return writeJSON(c.stdout, pin)
	}
	audit := store.AuditEntry{Actor: "cli", Action: "pin.reset", Target: id, Outcome: "ok",
		Detail: map[string]any{"repository": pin.Repository, "repository_id": pin.RepositoryID, "owner_id": pin.OwnerID, "workflow": pin.Workflow}}
	if err := st.DeletePin(ctx, id, audit); err != nil {
		fmt.Fprintf(c.stderr, "pin reset: %v\n", err)
		return exitUsage
	}
	fmt.Fprintf(c.stdout, "reset the pin of %s (was %s, repository id %s, owner id %s); its next verified release pins again\n",
		id, pin.Repository, pin.RepositoryID, pin.OwnerID)
	return exitOK
}

var backupHelp = help{
	Summary: "write a consistent snapshot of the database",
	Usage:   "registry backup [--data DIR] --out FILE",
	About: `Writes an online, consistent snapshot of the SQLite database to FILE (which must not exist).
Blobs are content-addressed and not in the snapshot: copy the blobs folder (DIR/blobs, or the
one --blobs names) alongside it; a bucket is not copied. Keep the transparency log key
(DIR/log.key, or serve's --log-key) with it too.
` + besideServe + `
Exit status: 0 when written, 1 when the snapshot could not be written, 2 on usage or I/O errors.`,
	Example: "registry backup --data /var/lib/registry --out registry-2026-12-01.db",
}

// cmdBackup is `registry backup --data DIR --out FILE`: an online, consistent snapshot.
func cmdBackup(ctx context.Context, c *cli, args []string) int {
	fs := c.flags("backup")
	out := fs.String("out", "", "snapshot `FILE` to write (must not exist); required")
	st, pos, code := openStore(ctx, c, fs, args)
	if st == nil {
		return code
	}
	defer st.Close()
	switch {
	case *out == "":
		return c.usageError("backup", "--out FILE is required")
	case len(pos) > 0:
		return c.usageError("backup", "expected no argument, found %q (the snapshot file is given with --out)", strings.Join(pos, " "))
	}
	if err := st.Backup(ctx, *out); err != nil {
		fmt.Fprintf(c.stderr, "backup: %v\n", err)
		return exitInvalid
	}
	fmt.Fprintf(c.stdout, "wrote %s; %s\n", *out, backupNote(st.Dir(), fs.Lookup("blobs").Value.String()))
	return exitOK
}

// backupNote says what a snapshot of dataDir's database lacks and must be kept beside it:
// the blobs where --blobs (blobsURL) puts them, and the transparency log key.
func backupNote(dataDir, blobsURL string) string {
	b := backends{blobs: blobsURL}
	key := fmt.Sprintf("keep the log key (%s, or the --log-key serve is given) with it too", filepath.Join(dataDir, "log.key"))
	switch {
	case b.s3():
		bucket, _, _ := strings.Cut(blobsURL, "?")
		return fmt.Sprintf("the blobs are in the bucket %s, which backup does not copy: keep versioning on it (docs/deploy.md); %s", bucket, key)
	case b.defaultBlobs(dataDir):
		return fmt.Sprintf("blobs are content-addressed: copy %s alongside it; %s", filepath.Join(dataDir, "blobs"), key)
	}
	return fmt.Sprintf("blobs are content-addressed: copy %s (--blobs) alongside it; %s", strings.TrimPrefix(blobsURL, "file:"), key)
}

var restoreHelp = help{
	Summary: "restore a database snapshot into a data directory",
	Usage:   "registry restore [--data DIR] [--database sqlite:PATH] [--force] SNAPSHOT",
	About: `Puts SNAPSHOT (written by registry backup) in place of the database of a stopped registry,
then lists the blobs it names that the blobs folder lacks. A file that is not a registry
database (an empty one too) is refused, and the database left as it was. The database is
the SQLite file --database (REGISTRY_DATABASE) names, as for serve; a PostgreSQL database is
refused: restore it with pg_restore from its pg_dump.
` + restoreNote + `
Exit status: 0 when restored, 1 when the restore was refused or failed, 2 on usage errors.`,
	Example: "registry restore --data /var/lib/registry --force registry-2026-12-01.db",
}

// cmdRestore is `registry restore --data DIR FILE`: put a snapshot in place of the database
// of a stopped registry. It takes the data directory as serve does, so it refuses while a
// registry serves from it, and a registry cannot start on it mid-restore.
func cmdRestore(ctx context.Context, c *cli, args []string) int {
	fs := c.flags("restore")
	data := dataFlag(c, fs)
	b := &backends{}
	fs.StringVar(&b.database, "database", envDefault(c, "REGISTRY_DATABASE", ""), "SQLite database `URL` to restore into: sqlite:PATH (default sqlite:DATA/registry.db), the one `registry serve` uses (REGISTRY_DATABASE)")
	force := fs.Bool("force", false, "replace an existing database")
	pos, err := parse(fs, args)
	if err != nil {
		return parseExit(err)
	}
	if len(pos) != 1 {
		return c.usageError("restore", "expected one SNAPSHOT file, found %d arguments", len(pos))
	}
	if err := b.check(false); err != nil {
		return c.usageError("restore", "%v", err)
	}
	dst := b.sqlitePath(*data)
	if dst == "" {
		return c.usageError("restore", "--database %s: restore is for the embedded SQLite database; restore PostgreSQL from its pg_dump with pg_restore, or load a SQLite snapshot into it with `registry migrate --from sqlite:SNAPSHOT --to URL`", redact(b.database))
	}
	if err := restore(ctx, c, *data, dst, pos[0], *force); err != nil {
		fmt.Fprintf(c.stderr, "restore: %v\n", err)
		return exitInvalid
	}
	return exitOK
}

// restore puts snapshot in place of the SQLite database file dst of the data directory dir.
func restore(ctx context.Context, c *cli, dir, dst, snapshot string, force bool) error {
	lock, err := lockDataDir(dir, "restoring into it")
	if err != nil {
		return err
	}
	defer lock.Close()
	kept := "nothing was restored" // what a refused or failed restore leaves
	if _, err := os.Stat(dst); err == nil {
		if !force {
			return fmt.Errorf("%s exists; stop the registry and pass --force to replace it", dst)
		}
		kept = dst + " is unchanged"
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o750); err != nil {
		return fmt.Errorf("database folder: %w", err)
	}
	tmp := dst + ".restore"
	defer removeRestoreTemp(tmp) // on every error; after the rename there is nothing left
	if err := copySnapshot(snapshot, tmp); err != nil {
		return fmt.Errorf("copying %s to %s: %w; %s", snapshot, tmp, err, kept)
	}
	if err := store.CheckSnapshot(ctx, tmp); err != nil {
		return fmt.Errorf("%s: %w; %s (give a file `registry backup` wrote)", snapshot, err, kept)
	}
	removeSidecars(tmp) // what the check may have left beside the copy
	if err := takeOwnership(tmp, dst, dir); err != nil {
		return fmt.Errorf("%w; %s", err, kept)
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		_ = os.Remove(dst + suffix)
	}
	if err := os.Rename(tmp, dst); err != nil {
		return err
	}
	st, err := store.OpenURL(ctx, "sqlite:"+dst, dir)
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
		fmt.Fprintf(c.stdout, "warning: %s the database lists are missing from %s; copy the blobs folder from the backup\n",
			plural(len(missing), "blob"), filepath.Join(dir, "blobs"))
	}
	return nil
}

// takeOwnership gives restore's copy the owner, group and mode of the database it
// replaces, or when there is none the owner and group of the data directory: a restore run
// as root left a root-owned database the registry's own user could not open.
func takeOwnership(tmp, dst, dir string) error {
	mode := fs.FileMode(0o640) // the copy's, when no database is replaced
	ref, err := os.Stat(dst)
	switch {
	case err == nil:
		mode = ref.Mode().Perm()
	case errors.Is(err, fs.ErrNotExist):
		if ref, err = os.Stat(dir); err != nil {
			return err
		}
	default:
		return err
	}
	if err := os.Chmod(tmp, mode); err != nil {
		return err
	}
	want, ok := ref.Sys().(*syscall.Stat_t)
	got, err := os.Stat(tmp)
	if err != nil || !ok {
		return err
	}
	if have := got.Sys().(*syscall.Stat_t); have.Uid != want.Uid || have.Gid != want.Gid {
		if err := os.Chown(tmp, int(want.Uid), int(want.Gid)); err != nil {
			return fmt.Errorf("give the restored database the owner of %s (uid %d, gid %d): %w; run restore as that user, or as root", ref.Name(), want.Uid, want.Gid, err)
		}
	}
	return nil
}

// copySnapshot copies the file snapshot to tmp and syncs it.
func copySnapshot(snapshot, tmp string) error {
	src, err := os.Open(snapshot)
	if err != nil {
		return err
	}
	defer src.Close()
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o640)
	if err != nil {
		return err
	}
	_, err = io.Copy(f, src)
	if err == nil {
		err = f.Sync()
	}
	return errors.Join(err, f.Close())
}

// removeRestoreTemp removes restore's temporary copy and the files SQLite may have made
// beside it while it was checked.
func removeRestoreTemp(tmp string) {
	_ = os.Remove(tmp)
	removeSidecars(tmp)
}

// removeSidecars removes the files SQLite keeps beside the database file path.
func removeSidecars(path string) {
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		_ = os.Remove(path + suffix)
	}
}

// Help notes on which commands may share a data directory with `registry serve`.
const (
	besideServe = "Safe to run while `registry serve` uses the same data directory: it only opens the database."
	restoreNote = "Refuses while `registry serve` (or another restore) holds the data directory: stop the registry first."
)

// lockDataDir takes the data directory for this process (serve, restore), or says which
// process holds it; before says what the holder must be stopped for.
func lockDataDir(dir, before string) (*store.DirLock, error) {
	return lockDir("--data "+dir, dir, before)
}

// lockDir takes dir, which the flag (with its value) named, or says which process holds it.
func lockDir(flag, dir, before string) (*store.DirLock, error) {
	l, err := store.LockDir(dir)
	if errors.Is(err, store.ErrLocked) {
		return nil, fmt.Errorf("%s: %w; stop it before %s", flag, err, before)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	return l, nil
}

// lockTarget is a directory to take and the flag (with its value) that named it.
type lockTarget struct{ flag, dir string }

// dirLocks are the directories a process took with lockDirs, given up together.
type dirLocks []*store.DirLock

func (ls dirLocks) Close() error {
	var errs []error
	for _, l := range ls {
		errs = append(errs, l.Close())
	}
	return errors.Join(errs...)
}

// lockDirs takes the directory of every target, each once however it is spelled (two
// locks of one directory conflict within a process too), or gives back those it took
// and says which process holds the first it could not take.
func lockDirs(before string, targets ...lockTarget) (dirLocks, error) {
	var ls dirLocks
	seen := make(map[string]bool, len(targets))
	for _, t := range targets {
		key := sameDirKey(t.dir)
		if seen[key] {
			continue
		}
		seen[key] = true
		l, err := lockDir(t.flag, t.dir, before)
		if err != nil {
			_ = ls.Close()
			return nil, err
		}
		ls = append(ls, l)
	}
	return ls, nil
}

// sameDirKey is dir absolute, with its symbolic links resolved when it exists.
func sameDirKey(dir string) string {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return filepath.Clean(dir)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		return real
	}
	return abs
}

// lockStore takes the data directory dir and, when --database names a SQLite file in
// another directory, that directory too. The lock is keyed by directory: a registry
// serving from a data directory holds it, so a --database naming that directory's
// registry.db meets the registry's lock instead of going around it, and two servers with
// their own --data cannot share one database file.
func lockStore(dir string, b backends, before string) (dirLocks, error) {
	targets := []lockTarget{{"--data " + dir, dir}}
	if file := b.sqlitePath(dir); file != "" && b.database != "" {
		targets = append(targets, lockTarget{"--database " + b.database, filepath.Dir(file)})
	}
	return lockDirs(before, targets...)
}
