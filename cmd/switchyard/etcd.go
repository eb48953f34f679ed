package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/switchyard-dev/switchyard/internal/dag"
	"github.com/switchyard-dev/switchyard/internal/etcdsource"
	"github.com/switchyard-dev/switchyard/internal/objects"
	"github.com/switchyard-dev/switchyard/internal/server"
)

// etcdOptions are the flags that reach an etcd cluster, shared by serve
// and the etcd commands.
type etcdOptions struct {
	endpoints    []string
	prefix       string
	ca           string
	cert, key    string
	username     string
	passwordFile string
	leaseTTL     int
}

// etcdServe holds serve's etcd flags.
var etcdServe etcdOptions

func init() {
	serveFlags = append(serveFlags, func(f *pflag.FlagSet, _ *server.Config) {
		etcdServe = etcdOptions{}
		addEtcdFlags(f, &etcdServe)
		f.IntVar(&etcdServe.leaseTTL, "etcd-lease-ttl", etcdsource.DefaultLeaseTTL, "seconds the status writer's etcd lease outlives a replica that stopped: how long status goes unwritten when the writer dies")
	})
	serveChecks = append(serveChecks, checkEtcdFlags)
	moreCommands = append(moreCommands, newEtcdCommand)
}

// checkEtcdFlags refuses etcd flags without --etcd-endpoints, which would
// otherwise be ignored while serve reads another source.
func checkEtcdFlags(f *pflag.FlagSet, _ *server.Config) error {
	if len(etcdServe.endpoints) > 0 {
		return nil
	}
	for _, name := range []string{"etcd-prefix", "etcd-ca", "etcd-cert", "etcd-key", "etcd-username", "etcd-password-file", "etcd-lease-ttl"} {
		if f.Changed(name) {
			return usageError("--%s needs --etcd-endpoints", name)
		}
	}
	return nil
}

func addEtcdFlags(f *pflag.FlagSet, o *etcdOptions) {
	f.StringSliceVar(&o.endpoints, "etcd-endpoints", nil, "read objects from these etcd client URLs (http(s)://host:port,...) instead of a directory, and write their status back")
	f.StringVar(&o.prefix, "etcd-prefix", etcdsource.DefaultPrefix, "etcd key prefix of the objects: <prefix><kind>/<namespace>/<name>; status goes under <prefix>status/")
	f.StringVar(&o.ca, "etcd-ca", "", "PEM file of the CA that signed the etcd servers' certificates")
	f.StringVar(&o.cert, "etcd-cert", "", "PEM file of the client certificate, for etcd with --client-cert-auth")
	f.StringVar(&o.key, "etcd-key", "", "PEM file of the client certificate's key")
	f.StringVar(&o.username, "etcd-username", "", "etcd user, for etcd with auth enabled (with --etcd-password-file)")
	f.StringVar(&o.passwordFile, "etcd-password-file", "", "file holding the etcd user's password")
}

func (o etcdOptions) client() etcdsource.ClientOptions {
	return etcdsource.ClientOptions{
		Endpoints: o.endpoints, CA: o.ca, Cert: o.cert, Key: o.key,
		Username: o.username, PasswordFile: o.passwordFile,
	}
}

// useEtcd reports whether serve reads from etcd, refusing a second source.
func useEtcd(source string) (bool, error) {
	if len(etcdServe.endpoints) == 0 {
		return false, nil
	}
	if source != "" || kube.kubeconfig != "" {
		return false, usageError("give one of --etcd-endpoints, --source and --kubeconfig")
	}
	return true, nil
}

// serveEtcd runs the control plane on the objects under the prefix, and
// writes their status back while this replica holds the status lease.
func serveEtcd(ctx context.Context, cfg server.Config, log *slog.Logger) error {
	c, err := etcdsource.NewClient(etcdServe.client())
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	defer c.Close()
	if cfg.Registry == nil {
		cfg.Registry = server.NewRegistry()
	}
	m := etcdsource.NewMetrics(cfg.Registry)
	w := etcdsource.NewStatusWriter(etcdsource.StatusConfig{
		Client: c, Prefix: etcdServe.prefix, Identity: identity(), LeaseTTL: etcdServe.leaseTTL, Metrics: m, Log: log,
	})
	src := etcdsource.New(etcdsource.Config{Client: c, Prefix: etcdServe.prefix, Metrics: m, Log: log, OnProblems: w.SetProblems, WithoutMesh: !cfg.Pipeline.DAG.Mesh})
	if prev := cfg.OnStatuses; prev != nil {
		cfg.OnStatuses = func(u dag.StatusUpdate) { prev(u); w.Apply(u) }
	} else {
		cfg.OnStatuses = w.Apply
	}
	cfg.ReadyDetail = src.ReadyDetail
	cfg.Log = log
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	werr := make(chan error, 1)
	go func() { werr <- w.Run(ctx) }()
	err = server.New(cfg).Run(ctx, withStartupGC(src))
	cancel()
	if serr := <-werr; err == nil {
		err = serr
	}
	if err != nil {
		return &exitError{code: 1, err: err}
	}
	return nil
}

func newEtcdCommand() *cobra.Command {
	var o etcdOptions
	cmd := &cobra.Command{
		Use:   "etcd",
		Short: "Write and remove the objects that serve --etcd-endpoints reads",
		Long: `The etcd commands store manifests in etcd with the layout serve reads:
one key per object, <prefix><kind>/<namespace>/<name> (<prefix>node/<name>
for a Node), its value the object in JSON. Each file is one transaction,
so a team's change lands whole or not at all; a file with a document that
does not decode is refused, with every problem listed.`,
	}
	addEtcdFlags(cmd.PersistentFlags(), &o)
	cmd.AddCommand(newEtcdApplyCommand(&o), newEtcdDeleteCommand(&o))
	return cmd
}

func newEtcdApplyCommand(o *etcdOptions) *cobra.Command {
	var files []string
	cmd := &cobra.Command{
		Use:     "apply -f FILE|DIR ...",
		Short:   "Write the objects of manifest files to etcd, one transaction per file",
		Example: `  switchyard etcd apply --etcd-endpoints http://127.0.0.1:2379 -f examples/etcd/manifests`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if len(files) == 0 {
				return usageError("give the manifests with -f FILE|DIR")
			}
			return eachFile(cmd.Context(), *o, files, cmd.OutOrStdout(), "written", etcdsource.ApplyFile)
		},
	}
	cmd.Flags().StringSliceVarP(&files, "filename", "f", nil, "manifest file, or directory of *.yaml and *.yml files (repeatable)")
	return cmd
}

func newEtcdDeleteCommand(o *etcdOptions) *cobra.Command {
	var files []string
	cmd := &cobra.Command{
		Use:   "delete (-f FILE|DIR ... | KIND NAMESPACE/NAME ...)",
		Short: "Remove objects and their status from etcd",
		Example: `  switchyard etcd delete -f examples/etcd/manifests/10-shop.yaml
  switchyard etcd delete httpproxy shop/app service shop/web`,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(files) > 0 && len(args) > 0:
				return usageError("give -f FILE|DIR or KIND NAMESPACE/NAME pairs, not both")
			case len(files) > 0:
				return eachFile(cmd.Context(), *o, files, cmd.OutOrStdout(), "deleted", etcdsource.DeleteFile)
			}
			keys, err := parseObjectArgs(args)
			if err != nil {
				return err
			}
			c, err := etcdsource.NewClient(o.client())
			if err != nil {
				return &exitError{code: 2, err: err}
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(cmd.Context(), 30*time.Second)
			defer cancel()
			res, err := etcdsource.DeleteKeys(ctx, c, o.prefix, keys)
			if err != nil {
				return &exitError{code: 1, err: err}
			}
			for _, k := range res.Keys {
				fmt.Fprintf(cmd.OutOrStdout(), "%s deleted\n", k)
			}
			return nil
		},
	}
	cmd.Flags().StringSliceVarP(&files, "filename", "f", nil, "manifest file, or directory of *.yaml and *.yml files, whose objects to delete (repeatable)")
	return cmd
}

// parseObjectArgs reads KIND NAMESPACE/NAME pairs (KIND NAME for a node).
func parseObjectArgs(args []string) ([]objects.Key, error) {
	if len(args) == 0 || len(args)%2 != 0 {
		return nil, usageError("give -f FILE|DIR, or KIND NAMESPACE/NAME pairs (such as httpproxy shop/app)")
	}
	var keys []objects.Key
	for i := 0; i < len(args); i += 2 {
		k, err := etcdsource.ParseKey("", strings.ToLower(args[i])+"/"+args[i+1])
		if err != nil {
			return nil, usageError("%s %s: %v", args[i], args[i+1], err)
		}
		keys = append(keys, k)
	}
	return keys, nil
}

// fileOp is etcdsource.ApplyFile or DeleteFile.
type fileOp func(context.Context, *clientv3.Client, string, string) (etcdsource.FileResult, error)

// eachFile runs op on every manifest file of paths, one transaction each,
// going on past a file that fails so that one bad file does not hold back
// the others; any failure makes the exit status 1.
func eachFile(ctx context.Context, o etcdOptions, paths []string, out io.Writer, did string, op fileOp) error {
	var files []string
	for _, p := range paths {
		fs, err := etcdsource.ManifestFiles(p)
		if err != nil {
			return &exitError{code: 2, err: err}
		}
		files = append(files, fs...)
	}
	c, err := etcdsource.NewClient(o.client())
	if err != nil {
		return &exitError{code: 2, err: err}
	}
	defer c.Close()
	var failed []error
	for _, f := range files {
		fctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		res, err := op(fctx, c, o.prefix, f)
		cancel()
		if err != nil {
			failed = append(failed, err)
			continue
		}
		for _, p := range res.Skipped {
			fmt.Fprintln(out, p)
		}
		fmt.Fprintf(out, "%s: %d objects %s at revision %d\n", f, len(res.Keys), did, res.Revision)
	}
	if len(failed) > 0 {
		return &exitError{code: 1, err: errors.Join(failed...)}
	}
	return nil
}
