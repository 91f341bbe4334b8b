package deploy_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/pluginyard/registry/index"
)

const manifestPath = "../../deploy/k8s/registry.yaml"

// The parts of Kubernetes objects the test reads (field names as the API spells them).
type object struct {
	APIVersion string                `yaml:"apiVersion"`
	Kind       string                `yaml:"kind"`
	Metadata   struct{ Name string } `yaml:"metadata"`
	Data       map[string]string     `yaml:"data"`
	Spec       objectSpec            `yaml:"spec"`
	// ServiceSelector is a Service's spec.selector (a plain map, where a Deployment's
	// selector has matchLabels).
	ServiceSelector map[string]string `yaml:"-"`
}

type serviceDoc struct {
	Spec struct {
		Selector map[string]string `yaml:"selector"`
	} `yaml:"spec"`
}

type objectSpec struct {
	Replicas *int `yaml:"replicas"`
	Selector struct {
		MatchLabels map[string]string `yaml:"matchLabels"`
	} `yaml:"selector"`
	Template    podTemplate `yaml:"template"`
	JobTemplate struct {
		Spec struct {
			Template podTemplate `yaml:"template"`
		} `yaml:"spec"`
	} `yaml:"jobTemplate"`
	Ports []struct {
		TargetPort string `yaml:"targetPort"`
	} `yaml:"ports"`
}

type podTemplate struct {
	Metadata struct {
		Labels map[string]string `yaml:"labels"`
	} `yaml:"metadata"`
	Spec podSpec `yaml:"spec"`
}

type podSpec struct {
	SecurityContext struct {
		RunAsNonRoot *bool `yaml:"runAsNonRoot"`
		RunAsUser    *int  `yaml:"runAsUser"`
	} `yaml:"securityContext"`
	Containers []container `yaml:"containers"`
	Volumes    []volume    `yaml:"volumes"`
}

type container struct {
	Name  string   `yaml:"name"`
	Image string   `yaml:"image"`
	Args  []string `yaml:"args"`
	Env   []struct {
		Name      string  `yaml:"name"`
		Value     *string `yaml:"value"`
		ValueFrom *struct {
			SecretKeyRef *struct{ Name, Key string } `yaml:"secretKeyRef"`
		} `yaml:"valueFrom"`
	} `yaml:"env"`
	Ports          []containerPort `yaml:"ports"`
	ReadinessProbe *probe          `yaml:"readinessProbe"`
	LivenessProbe  *probe          `yaml:"livenessProbe"`
	Resources      struct {
		Requests map[string]string `yaml:"requests"`
		Limits   map[string]string `yaml:"limits"`
	} `yaml:"resources"`
	SecurityContext struct {
		AllowPrivilegeEscalation *bool `yaml:"allowPrivilegeEscalation"`
		ReadOnlyRootFilesystem   *bool `yaml:"readOnlyRootFilesystem"`
	} `yaml:"securityContext"`
	VolumeMounts []struct {
		Name      string `yaml:"name"`
		MountPath string `yaml:"mountPath"`
	} `yaml:"volumeMounts"`
}

type containerPort struct {
	Name          string `yaml:"name"`
	ContainerPort int    `yaml:"containerPort"`
}

type probe struct {
	HTTPGet *struct {
		Path string `yaml:"path"`
		Port string `yaml:"port"`
	} `yaml:"httpGet"`
}

type volume struct {
	Name      string    `yaml:"name"`
	EmptyDir  *struct{} `yaml:"emptyDir"`
	ConfigMap *struct {
		Name string `yaml:"name"`
	} `yaml:"configMap"`
	Secret *struct {
		SecretName string `yaml:"secretName"`
	} `yaml:"secret"`
}

// manifest parses every document of deploy/k8s/registry.yaml, by kind.
func manifest(tb testing.TB) map[string]object {
	tb.Helper()
	raw, err := os.ReadFile(manifestPath)
	if err != nil {
		tb.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(raw))
	out := map[string]object{}
	for {
		var n yaml.Node
		err := dec.Decode(&n)
		if errors.Is(err, io.EOF) {
			break
		}
		var o object
		if err == nil {
			err = n.Decode(&o)
		}
		if err == nil && o.Kind == "Service" {
			var sd serviceDoc
			err = n.Decode(&sd)
			o.ServiceSelector = sd.Spec.Selector
		}
		if err != nil {
			tb.Fatalf("%s: %v", manifestPath, err)
		}
		if o.APIVersion == "" || o.Kind == "" || o.Metadata.Name == "" {
			tb.Fatalf("%s: a document without apiVersion, kind or metadata.name: %+v", manifestPath, o)
		}
		if _, dup := out[o.Kind]; dup {
			tb.Fatalf("%s: two %s documents; the test expects one of each", manifestPath, o.Kind)
		}
		out[o.Kind] = o
	}
	return out
}

func TestManifestKinds(t *testing.T) {
	var kinds []string
	for k := range manifest(t) {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	want := []string{"ConfigMap", "CronJob", "Deployment", "PodDisruptionBudget", "Service"}
	if !slices.Equal(kinds, want) {
		t.Errorf("kinds %v, want %v", kinds, want)
	}
}

// registryContainer is the only container of a pod template.
func registryContainer(tb testing.TB, kind string, p podTemplate) container {
	tb.Helper()
	if len(p.Spec.Containers) != 1 {
		tb.Fatalf("%s: %d containers, want 1", kind, len(p.Spec.Containers))
	}
	return p.Spec.Containers[0]
}

func TestManifestDeployment(t *testing.T) {
	d := manifest(t)["Deployment"]
	if d.Spec.Replicas == nil || *d.Spec.Replicas != 3 {
		t.Errorf("replicas %v, want 3", d.Spec.Replicas)
	}
	pod := d.Spec.Template
	c := registryContainer(t, "Deployment", pod)
	if c.ReadinessProbe == nil || c.ReadinessProbe.HTTPGet == nil || c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Errorf("readiness probe %+v, want GET /readyz", c.ReadinessProbe)
	}
	if c.LivenessProbe == nil || c.LivenessProbe.HTTPGet == nil || c.LivenessProbe.HTTPGet.Path != "/healthz" {
		t.Errorf("liveness probe %+v, want GET /healthz", c.LivenessProbe)
	}
	for _, r := range []string{"cpu", "memory"} {
		if c.Resources.Requests[r] == "" {
			t.Errorf("no %s request", r)
		}
	}
	if c.Resources.Limits["memory"] == "" {
		t.Error("no memory limit")
	}
	if sc := pod.Spec.SecurityContext; sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser == 0 {
		t.Errorf("pod securityContext %+v: want runAsNonRoot and a non-zero runAsUser", sc)
	}
	if sc := c.SecurityContext; sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation {
		t.Errorf("container securityContext %+v: want readOnlyRootFilesystem and no privilege escalation", sc)
	}
	if len(c.Args) == 0 || c.Args[0] != "serve" {
		t.Fatalf("args %v: want serve first (the image's entrypoint is registry)", c.Args)
	}
	args := checkArgs(t, "Deployment", c, helpFlags(t, "serve"))
	for _, name := range requiredSettings(t) {
		if _, ok := args[name]; !ok {
			t.Errorf("the container's args do not set %s, a required setting of docs/deploy.md", name)
		}
	}
	checkMounts(t, "Deployment", pod, c, args, manifest(t)["ConfigMap"])
	checkService(t, manifest(t)["Service"], pod, c)
}

// TestManifestCronJob: pull sync runs from one job with the replicas' database and bucket.
func TestManifestCronJob(t *testing.T) {
	m := manifest(t)
	pod := m["CronJob"].Spec.JobTemplate.Spec.Template
	c := registryContainer(t, "CronJob", pod)
	if len(c.Args) < 2 || c.Args[0] != "sync" || !slices.Contains(c.Args, "--once") {
		t.Fatalf("CronJob args %v: want sync --once", c.Args)
	}
	args := checkArgs(t, "CronJob", c, helpFlags(t, "sync"))
	serve := checkArgs(t, "Deployment", registryContainer(t, "Deployment", m["Deployment"].Spec.Template), helpFlags(t, "serve"))
	for _, name := range []string{"--database", "--blobs", "--plugins", "--public-url"} {
		if args[name] != serve[name] {
			t.Errorf("CronJob %s=%q, the replicas' is %q: sync must see the same registry", name, args[name], serve[name])
		}
	}
	if serve["--sync-interval"] != "0" {
		t.Errorf("serve --sync-interval=%q with a sync CronJob: want 0, or every replica polls GitHub too", serve["--sync-interval"])
	}
	checkMounts(t, "CronJob", pod, c, args, m["ConfigMap"])
}

var varRef = regexp.MustCompile(`\$\(([A-Za-z_][A-Za-z0-9_]*)\)`)

// checkArgs checks that every --flag of c's args is a flag of the command's help, that every
// $(VAR) they use is in c's env, and that credentials come from a Secret; it returns the
// flags' values ("" for a boolean).
func checkArgs(tb testing.TB, kind string, c container, help map[string]flagHelp) map[string]string {
	tb.Helper()
	env := map[string]bool{}
	for _, e := range c.Env {
		env[e.Name] = true
		secret := e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name != ""
		if (strings.HasPrefix(e.Name, "AWS_") || strings.Contains(e.Name, "TOKEN") || strings.Contains(e.Name, "DATABASE")) && !secret {
			tb.Errorf("%s: env %s is not taken from a Secret (secretKeyRef)", kind, e.Name)
		}
	}
	out := map[string]string{}
	for _, a := range c.Args[1:] {
		if !strings.HasPrefix(a, "--") {
			continue
		}
		name, value, _ := strings.Cut(a, "=")
		if _, ok := help[name]; !ok {
			tb.Errorf("%s: arg %s is not a flag of registry %s (-h)", kind, name, c.Args[0])
		}
		for _, m := range varRef.FindAllStringSubmatch(value, -1) {
			if !env[m[1]] {
				tb.Errorf("%s: arg %s uses $(%s), which the container's env does not define", kind, a, m[1])
			}
		}
		out[name] = value
	}
	for _, name := range []string{"--database", "--blobs"} {
		if v := out[name]; !varRef.MatchString(v) {
			tb.Errorf("%s: %s=%q: want it from a Secret through $(VAR), never inline", kind, name, v)
		}
	}
	return out
}

// checkMounts: --data is an emptyDir, --plugins a file of the ConfigMap, --log-key (when
// set) a file of a Secret.
func checkMounts(tb testing.TB, kind string, pod podTemplate, c container, args map[string]string, cm object) {
	tb.Helper()
	mountOf := func(path string) *volume {
		for _, m := range c.VolumeMounts {
			if path == m.MountPath || strings.HasPrefix(path, strings.TrimSuffix(m.MountPath, "/")+"/") {
				for i, v := range pod.Spec.Volumes {
					if v.Name == m.Name {
						return &pod.Spec.Volumes[i]
					}
				}
				tb.Errorf("%s: mount %s names no volume %s", kind, m.MountPath, m.Name)
			}
		}
		return nil
	}
	if v := mountOf(args["--data"]); v == nil || v.EmptyDir == nil {
		tb.Errorf("%s: --data=%q is not on an emptyDir volume", kind, args["--data"])
	}
	if v := mountOf("/tmp"); v == nil || v.EmptyDir == nil {
		tb.Errorf("%s: /tmp is not an emptyDir (the root file system is read-only)", kind)
	}
	plugins := args["--plugins"]
	v := mountOf(plugins)
	if v == nil || v.ConfigMap == nil || v.ConfigMap.Name != cm.Metadata.Name {
		tb.Fatalf("%s: --plugins=%q is not a file of the ConfigMap %s", kind, plugins, cm.Metadata.Name)
	}
	key := plugins[strings.LastIndex(plugins, "/")+1:]
	list, ok := cm.Data[key]
	if !ok {
		tb.Fatalf("ConfigMap %s has no key %s (--plugins=%s)", cm.Metadata.Name, key, plugins)
	}
	if _, probs := index.ParseList([]byte(list)); probs.HasErrors() {
		tb.Errorf("ConfigMap %s: %s is not a valid curated list: %v", cm.Metadata.Name, key, probs)
	}
	if key := args["--log-key"]; key != "" {
		if v := mountOf(key); v == nil || v.Secret == nil {
			tb.Errorf("%s: --log-key=%q is not a file of a Secret", kind, key)
		}
	}
}

// checkService: the Service selects the Deployment's pods and targets its container's port.
func checkService(tb testing.TB, svc object, pod podTemplate, c container) {
	tb.Helper()
	if len(svc.ServiceSelector) == 0 {
		tb.Fatal("Service has no selector")
	}
	for k, v := range svc.ServiceSelector {
		if pod.Metadata.Labels[k] != v {
			tb.Errorf("Service selects %s=%s, which the Deployment's pods do not carry", k, v)
		}
	}
	for _, p := range svc.Spec.Ports {
		if !slices.ContainsFunc(c.Ports, func(cp containerPort) bool { return cp.Name == p.TargetPort }) {
			tb.Errorf("Service targets port %q, which the container does not name", p.TargetPort)
		}
	}
	addr := ""
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--addr="); ok {
			addr = v
		}
	}
	if len(c.Ports) == 0 || !strings.HasSuffix(addr, fmt.Sprintf(":%d", c.Ports[0].ContainerPort)) {
		tb.Errorf("--addr=%q does not listen on the container's port %v", addr, c.Ports)
	}
}
