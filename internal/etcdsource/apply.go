package etcdsource

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	clientv3 "go.etcd.io/etcd/client/v3"

	"github.com/switchyard-dev/switchyard/internal/dirsource"
	"github.com/switchyard-dev/switchyard/internal/objects"
)

// FileResult is what Apply or Delete did with one file.
type FileResult struct {
	File string
	// Keys are the etcd keys written or deleted, in document order.
	Keys []string
	// Skipped are the documents left out that Switchyard does not read
	// (warnings); a file with an error is not applied at all.
	Skipped []dirsource.Problem
	// Revision is the etcd revision of the file's transaction.
	Revision int64
}

// FileError is a file that was not applied because some of it does not
// decode: a team's change lands whole or not at all.
type FileError struct {
	File     string
	Problems []dirsource.Problem
}

func (e *FileError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: not applied, %d problems:", e.File, len(e.Problems))
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	return b.String()
}

// ManifestFiles returns path itself when it is a file (of any name), or
// every *.yaml and *.yml file under it in walk order, skipping hidden
// ones, as the directory source reads them.
func ManifestFiles(path string) ([]string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return []string{path}, nil
	}
	var files []string
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p != path && strings.HasPrefix(d.Name(), ".") {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(p) {
		case ".yaml", ".yml":
			if !d.IsDir() {
				files = append(files, p)
			}
		}
		return nil
	})
	return files, err
}

// readForWrite reads a file for ApplyFile or DeleteFile: an error in any
// document refuses the whole file.
func readForWrite(file string) ([]dirsource.Object, []dirsource.Problem, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, err
	}
	objs, ps := dirsource.Decode(file, data, dirsource.KeepAll()) // written as the file says
	var errs, warns []dirsource.Problem
	for _, p := range ps {
		if p.Severity == dirsource.Error {
			errs = append(errs, p)
		} else {
			warns = append(warns, p)
		}
	}
	if len(errs) > 0 {
		return nil, nil, &FileError{File: file, Problems: errs}
	}
	seen := map[objects.Key]int{}
	for _, o := range objs {
		if line, dup := seen[o.Key]; dup {
			return nil, nil, &FileError{File: file, Problems: []dirsource.Problem{{
				File: file, Line: o.Line, Kind: o.Key.Kind.String(), Namespace: o.Key.Namespace, Name: o.Key.Name,
				Severity: dirsource.Error, Message: fmt.Sprintf("defined again (first on line %d)", line),
			}}}
		}
		seen[o.Key] = o.Line
	}
	return objs, warns, nil
}

// ApplyFile writes every object of a manifest file under prefix in one
// transaction. Values are the objects as decoded (namespace defaulted,
// Secret stringData folded into data), in JSON, without status.
func ApplyFile(ctx context.Context, c *clientv3.Client, prefix, file string) (FileResult, error) {
	prefix = CleanPrefix(prefix)
	objs, warns, err := readForWrite(file)
	if err != nil {
		return FileResult{}, err
	}
	res := FileResult{File: file, Skipped: warns}
	ops := make([]clientv3.Op, 0, len(objs))
	for _, o := range objs {
		v, err := encodeObject(o)
		if err != nil {
			return FileResult{}, fmt.Errorf("%s:%d: %s: %w", file, o.Line, o.Key, err)
		}
		k := ObjectKey(prefix, o.Key)
		ops = append(ops, clientv3.OpPut(k, string(v)))
		res.Keys = append(res.Keys, k)
	}
	return res, commitFile(ctx, c, &res, ops)
}

// DeleteFile removes the objects a manifest file defines, in one
// transaction.
func DeleteFile(ctx context.Context, c *clientv3.Client, prefix, file string) (FileResult, error) {
	prefix = CleanPrefix(prefix)
	objs, warns, err := readForWrite(file)
	if err != nil {
		return FileResult{}, err
	}
	keys := make([]objects.Key, len(objs))
	for i, o := range objs {
		keys[i] = o.Key
	}
	res, err := DeleteKeys(ctx, c, prefix, keys)
	res.File, res.Skipped = file, warns
	return res, err
}

// DeleteKeys removes objects by key, in one transaction, with their
// status.
func DeleteKeys(ctx context.Context, c *clientv3.Client, prefix string, keys []objects.Key) (FileResult, error) {
	prefix = CleanPrefix(prefix)
	var res FileResult
	ops := make([]clientv3.Op, 0, 2*len(keys))
	for _, k := range keys {
		ek := ObjectKey(prefix, k)
		ops = append(ops, clientv3.OpDelete(ek), clientv3.OpDelete(StatusKey(prefix, k)))
		res.Keys = append(res.Keys, ek)
	}
	return res, commitFile(ctx, c, &res, ops)
}

func commitFile(ctx context.Context, c *clientv3.Client, res *FileResult, ops []clientv3.Op) error {
	if len(ops) == 0 {
		return nil
	}
	resp, err := c.Txn(ctx).Then(ops...).Commit()
	if err != nil {
		if strings.Contains(err.Error(), "too many operations") {
			return fmt.Errorf("%s: %w (one file is one transaction: split the file, or raise etcd's --max-txn-ops)", res.File, err)
		}
		return fmt.Errorf("%s: %w", res.File, err)
	}
	res.Revision = resp.Header.Revision
	return nil
}

// encodeObject is the value an object is stored as: JSON without status,
// which is Switchyard's to write under <prefix>status/.
func encodeObject(o dirsource.Object) ([]byte, error) {
	b, err := json.Marshal(o.Object)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	delete(m, "status")
	if md, ok := m["metadata"].(map[string]any); ok && md["creationTimestamp"] == nil {
		delete(md, "creationTimestamp")
	}
	return json.Marshal(m) // map keys sorted: the same object, the same bytes
}
