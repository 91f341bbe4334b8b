package verify_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/pluginyard/registry/verify"
)

func TestFileName(t *testing.T) {
	tests := []struct {
		name     string
		entries  []entry
		fileName string
		want     []finding
	}{
		{"plugin matches", validPlugin(t), "hello-verify-1.0.0.tar.gz", nil},
		{"no file name given", validPlugin(t), "", nil},
		{"plugin id differs", validPlugin(t), "hello-other-1.0.0.tar.gz", []finding{e("package.filename", "")}},
		{"plugin version differs", validPlugin(t), "hello-verify-1.0.1.tar.gz", []finding{e("package.filename", "")}},
		{"plugin with a v prefix", validPlugin(t), "hello-verify-v1.0.0.tar.gz", []finding{e("package.filename", "")}},
		{"other suffix only warns", validPlugin(t), "upload.bin", []finding{w("package.filename", "")}},
		{"canvas matches", validCanvas(t), "board-verify-2.1.0.tar.gz", nil},
		{"scoped extension as npm pack names it", npmExtension(), "acme-curupira-ext-1.2.0.tgz", nil},
		{"scoped extension, .tar.gz", npmExtension(), "acme-curupira-ext-1.2.0.tar.gz", nil},
		{"scoped extension with the scope left out", npmExtension(), "curupira-ext-1.2.0.tgz", []finding{e("package.filename", "")}},
		{"extension version differs", rootExtension(), "acme-ext-1.3.0.tar.gz", []finding{e("package.filename", "")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := mustPackage(t, buildTarGz(t, tt.entries), verify.Options{FileName: tt.fileName})
			if diff := cmp.Diff(tt.want, ownFindings(rep.Problems), sortFindings); diff != "" {
				t.Errorf("problems (-want +got):\n%s\nall: %v", diff, rep.Problems)
			}
		})
	}
}

func TestNPMLayoutKeepsFilesUnderPackage(t *testing.T) {
	rep := mustPackage(t, buildTarGz(t, append(npmExtension(), file("stray.txt", "x"))), verify.Options{})
	want := []finding{e("archive.layout", "stray.txt")}
	if diff := cmp.Diff(want, ownFindings(rep.Problems), sortFindings); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}
