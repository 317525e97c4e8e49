// Command check is a schema check of the manifests in deploy/kubernetes: each document is
// decoded strictly into the Kubernetes API types of k8s.io/api, so that an unknown or
// misspelt field, or a value of the wrong type, fails. It is a module of its own so that
// anysqs does not depend on the Kubernetes libraries.
//
//	cd deploy/kubernetes/check && go run . ../*/*.yaml
package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
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
	default:
		return fmt.Errorf("no schema here for %s %s", meta.APIVersion, meta.Kind)
	}
	return yaml.UnmarshalStrict(doc, obj)
}
