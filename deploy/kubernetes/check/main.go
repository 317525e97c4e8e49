// Command check is a schema check of the manifests in deploy/kubernetes and of what the
// Helm chart in deploy/helm renders: each document is decoded strictly into the Kubernetes
// API types of k8s.io/api, so that an unknown or misspelt field, or a value of the wrong
// type, fails. It is a module of its own so that anysqs does not depend on the Kubernetes
// libraries.
//
//	cd deploy/kubernetes/check && go run . ../*/*.yaml
//	helm template deploy/helm/anysqs > out.yaml && go run . out.yaml   (cmd/anysqs TestHelmChart)
package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"
)

func main() {
	failed := false
	for _, path := range os.Args[1:] {
		if strings.HasSuffix(path, "kustomization.yaml") {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			fmt.Println(err)
			failed = true
			continue
		}
		for i, doc := range bytes.Split(data, []byte("\n---\n")) {
			if blank(doc) {
				continue
			}
			if err := check(doc); err != nil {
				fmt.Printf("%s (document %d): %v\n", path, i+1, err)
				failed = true
			} else {
				fmt.Printf("%s: ok\n", path)
			}
		}
	}
	if failed {
		os.Exit(1)
	}
}

func check(doc []byte) error {
	var meta struct{ APIVersion, Kind string }
	if err := yaml.Unmarshal(doc, &meta); err != nil {
		return err
	}
	var obj any
	switch meta.APIVersion + " " + meta.Kind {
	case "v1 ConfigMap":
		obj = &corev1.ConfigMap{}
	case "v1 Secret":
		obj = &corev1.Secret{}
	case "v1 Service":
		obj = &corev1.Service{}
	case "v1 ServiceAccount":
		obj = &corev1.ServiceAccount{}
	case "apps/v1 Deployment":
		obj = &appsv1.Deployment{}
	case "apps/v1 StatefulSet":
		obj = &appsv1.StatefulSet{}
	case "policy/v1 PodDisruptionBudget":
		obj = &policyv1.PodDisruptionBudget{}
	case "monitoring.coreos.com/v1 ServiceMonitor":
		obj = &serviceMonitor{}
	default:
		return fmt.Errorf("no schema here for %s %s", meta.APIVersion, meta.Kind)
	}
	return yaml.UnmarshalStrict(doc, obj)
}

// serviceMonitor is the part of the Prometheus Operator's ServiceMonitor (a CRD, so not in
// k8s.io/api) that the chart sets: any other field fails the strict decode, so a field
// the operator does not know cannot slip in unnoticed. Field names and types follow
// monitoring.coreos.com/v1 (prometheus-operator pkg/apis/monitoring/v1).
type serviceMonitor struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata"`
	Spec              struct {
		Selector  metav1.LabelSelector `json:"selector"`
		Endpoints []struct {
			Port          string `json:"port"`
			Path          string `json:"path"`
			Interval      string `json:"interval"`
			ScrapeTimeout string `json:"scrapeTimeout"`
		} `json:"endpoints"`
	} `json:"spec"`
}

// blank reports whether a document holds nothing but comments (helm's "# Source:" lines
// of a template that rendered empty) and white space.
func blank(doc []byte) bool {
	for _, line := range bytes.Split(doc, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) > 0 && line[0] != '#' && !bytes.Equal(line, []byte("---")) {
			return false
		}
	}
	return true
}
