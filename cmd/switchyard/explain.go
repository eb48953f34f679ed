package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/switchyard-dev/switchyard/internal/dirsource"
	"github.com/switchyard-dev/switchyard/internal/explain"
	"github.com/switchyard-dev/switchyard/internal/render"
	"github.com/switchyard-dev/switchyard/internal/translator"
	"github.com/switchyard-dev/switchyard/internal/xdsres"
)

func init() { moreCommands = append(moreCommands, newExplainCommand) }

func newExplainCommand() *cobra.Command {
	var (
		req                    explain.Request
		headers                []string
		source, server, output string
		opts                   render.Options
	)
	cmd := &cobra.Command{
		Use:   "explain --url URL [-H 'Name: value'] [--source DIR | --server URL]",
		Short: "Say what Envoy (or a gRPC client) does with one request, and why",
		Long: `explain follows one request through the xDS resources Switchyard serves, the
way the data plane does: listener and filter chain (SNI), scoped route or RDS,
virtual host, each route in order with the reason it did not match, the HTTP
filters on the way (authorization, ...), then the clusters, priorities,
localities and endpoints with each one's share of traffic. When the answer is
a 404, 503, 403 or a redirect it says why and names the HTTPProxy and field
to change.

With --source it builds the resources from a directory of manifests, as
render does (default: the embedded quickstart). With --server it asks a
running 'switchyard serve' (GET /api/explain on its admin endpoint), which
explains against what it serves right now.

Exit status: 0 when the request was explained, whatever the outcome; 2 on
usage or I/O errors.`,
		Example: `  # Why does this request get a 404?
  switchyard explain --source examples/quickstart --url http://shop.example.com/cart

  # Against a running control plane, with headers, as JSON:
  switchyard explain --server http://127.0.0.1:8000 --url https://api.example.com/v1 \
    -H 'X-Canary: true' -o json

  # What a proxyless gRPC client dialling xds:///api.example.com does:
  switchyard explain --group grpc --url xds:///api.example.com/pkg.Service/Method`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if req.URL == "" {
				return usageError("--url is required")
			}
			if output != "text" && output != "json" {
				return usageError("-o %q: use text or json", output)
			}
			if source != "" && server != "" {
				return usageError("--source and --server are exclusive: explain offline or ask a server")
			}
			for _, h := range headers {
				name, value, ok := strings.Cut(h, ":")
				if !ok {
					return usageError("-H %q: want 'Name: value'", h)
				}
				req.Headers = append(req.Headers, explain.Header{Name: strings.TrimSpace(name), Value: strings.TrimSpace(value)})
			}
			var (
				res *explain.Result
				err error
			)
			if server != "" {
				res, err = explainRemote(server, req)
			} else {
				res, err = explainLocal(cmd, source, opts, req)
			}
			if err != nil {
				return err
			}
			return printExplanation(cmd.OutOrStdout(), res, output)
		},
	}
	f := cmd.Flags()
	f.StringVar(&req.URL, "url", "", "the request's URL: http://, https:// or, for --group grpc, xds:///host/service/method")
	f.StringArrayVarP(&headers, "header", "H", nil, "a request header, 'Name: value' (repeatable; 'Host: ...' sets the authority)")
	f.StringVar(&req.Method, "method", "GET", "the request's method")
	f.StringVar(&req.SourceIP, "source-ip", "", "the client's IP address, for filters that look at it")
	f.StringVar(&req.Group, "group", "envoy", "whose view to explain: "+strings.Join(explain.Groups, " or "))
	f.StringVar(&source, "source", "", "directory of manifests to build the resources from (default: the embedded quickstart)")
	f.StringVar(&server, "server", "", "admin URL of a running 'switchyard serve' to ask instead, e.g. http://127.0.0.1:8000")
	f.StringVarP(&output, "output", "o", "text", "output format: text or json")
	opts.Translator = translator.DefaultOptions()
	addBuildFlags(f, &opts.DAG, &opts.Translator)
	return cmd
}

// explainLocal builds the group's resources from manifests, through the
// same code as render, and explains the request against them.
func explainLocal(cmd *cobra.Command, source string, opts render.Options, req explain.Request) (*explain.Result, error) {
	dir, cleanup, err := defaultSource(source, cmd.ErrOrStderr())
	if err != nil {
		return nil, &exitError{code: 2, err: err}
	}
	defer cleanup()
	snap, problems, err := dirsource.Load(dir, dirsource.Mesh(opts.DAG.Mesh))
	if err != nil {
		return nil, &exitError{code: 2, err: err}
	}
	for _, p := range problems {
		fmt.Fprintf(cmd.ErrOrStderr(), "switchyard: %s\n", p)
	}
	opts.Group = xdsres.Group(req.Group)
	out, err := render.Run(snap, opts)
	if err != nil {
		return nil, usageError("%v", err)
	}
	res, err := explain.Explain(explain.FromRender(out), req)
	if err != nil {
		return nil, usageError("%v", err)
	}
	return res, nil
}

// explainRemote asks a running control plane's admin endpoint.
func explainRemote(server string, req explain.Request) (*explain.Result, error) {
	q := url.Values{"url": {req.URL}, "method": {req.Method}, "group": {req.Group}}
	if req.SourceIP != "" {
		q.Set("sourceIP", req.SourceIP)
	}
	for _, h := range req.Headers {
		q.Add("header", h.Name+": "+h.Value)
	}
	u := strings.TrimSuffix(server, "/") + "/api/explain?" + q.Encode()
	client := &http.Client{Timeout: 30 * time.Second}
	resp, err := client.Get(u)
	if err != nil {
		return nil, &exitError{code: 2, err: fmt.Errorf("asking %s: %w", server, err)}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, &exitError{code: 2, err: fmt.Errorf("reading the answer of %s: %w", server, err)}
	}
	if resp.StatusCode == http.StatusBadRequest {
		return nil, usageError("%s", strings.TrimSpace(string(body)))
	}
	if resp.StatusCode != http.StatusOK {
		return nil, &exitError{code: 2, err: fmt.Errorf("%s answered %s: %s", u, resp.Status, strings.TrimSpace(string(body)))}
	}
	var res explain.Result
	if err := json.Unmarshal(body, &res); err != nil {
		return nil, &exitError{code: 2, err: fmt.Errorf("%s did not answer an explanation: %w", server, err)}
	}
	return &res, nil
}

func printExplanation(w io.Writer, res *explain.Result, output string) error {
	var b []byte
	if output == "json" {
		j, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return &exitError{code: 2, err: err}
		}
		b = append(j, '\n') //nolint:gocritic // j is not used again
	} else {
		b = []byte(res.Text())
	}
	if _, err := w.Write(b); err != nil {
		return &exitError{code: 2, err: err}
	}
	return nil
}
