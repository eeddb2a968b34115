# Patched kubelet build toolchain. This file is a thin front: every target
# calls the Go CLI in scripts/ (see `make help`).

SHELL := /bin/bash
.DEFAULT_GOAL := help

VERSION ?=
VARIANT ?= patched
KUBE_SOURCE_ZIP ?=
# The Go toolchain the CLI itself runs with (releases pin their own in versions.yaml).
export GOTOOLCHAIN ?= go1.26.8
# Never pick up a go.work from outside the repository.
export GOFLAGS := -buildvcs=false

OUTPUT := _output
TOOLCHAIN := $(OUTPUT)/bin/toolchain
CLI := $(TOOLCHAIN) --root .

##@ Build

.PHONY: kubelet
kubelet: $(TOOLCHAIN) ## Build the kubelet: make kubelet VERSION=1.9.11 [VARIANT=patched|vanilla] [KUBE_SOURCE_ZIP=...]
	@$(CLI) kubelet --release "$(VERSION)" --variant "$(VARIANT)" --source-zip "$(KUBE_SOURCE_ZIP)"

.PHONY: dockershim
dockershim: $(TOOLCHAIN) ## Build the standalone dockershim (with its kubelet, one target) for kubelets 1.24/1.25: make dockershim VERSION=1.23.17 [VARIANT=patched|vanilla]
	@$(CLI) dockershim --release "$(VERSION)" --variant "$(VARIANT)" --source-zip "$(KUBE_SOURCE_ZIP)"

.PHONY: switch-node
switch-node: $(TOOLCHAIN) ## Move a kubeadm node's kubelet 1.23 onto 1.23.17's dockershim served on its own, for kubelet 1.24/1.25: make switch-node TO=1.24.17 [NODE_ROOT=/] [APPLY=1 | BACK=1] (without APPLY: the plan and every file it writes)
	@$(CLI) switch-node --to "$(TO)" --node-root "$(or $(NODE_ROOT),/)" $(if $(APPLY),--apply) $(if $(BACK),--back)

.PHONY: control-plane
control-plane: $(TOOLCHAIN) ## Build kube-apiserver, kube-controller-manager, kube-scheduler, kubectl, kube-proxy: make control-plane VERSION=1.9.11
	@$(CLI) control-plane --release "$(VERSION)" --source-zip "$(KUBE_SOURCE_ZIP)"

.PHONY: conformance-suite
conformance-suite: $(TOOLCHAIN) ## Build upstream's node conformance suite (e2e_node.test): make conformance-suite VERSION=1.9.11
	@$(CLI) conformance-suite --release "$(VERSION)" --source-zip "$(KUBE_SOURCE_ZIP)"

.PHONY: check-control-plane
check-control-plane: $(TOOLCHAIN) ## Check each built control-plane binary runs and reports the stamped version and official commit
	@$(CLI) control-plane --check --release "$(VERSION)"

.PHONY: lock
lock: $(TOOLCHAIN) ## Regenerate and check a release's dependency lock: make lock VERSION=1.9.11 [SEED=pins.json]
	@$(CLI) lock --release "$(VERSION)" --seed "$(SEED)" --source-zip "$(KUBE_SOURCE_ZIP)"

.PHONY: verify-locks
verify-locks: $(TOOLCHAIN) ## Check every downloadable release's lock against the proxy and its tree
	@$(CLI) lock --check

.PHONY: verify-checksums
verify-checksums: $(TOOLCHAIN) ## Compare built kubelets and control planes with CHECKSUMS (shows expected and actual)
	@$(CLI) verify-checksums $(if $(VERSION),--release "$(VERSION)")

.PHONY: update-checksums
update-checksums: $(TOOLCHAIN) ## Record the built kubelets' and control planes' sha256 in CHECKSUMS
	@$(CLI) update-checksums $(if $(VERSION),--release "$(VERSION)")

# How pods reach the kubelet, for hash and preflight: SOURCE=api (default:
# kubectl get pods -o yaml) or static (manifests; PODS may be a directory),
# with the static path's NODE_NAME, MANIFEST_PATH (PODS' path on the node),
# ALLOW_PRIVILEGED=true|false and FEATURE_GATES.
POD_FLAGS = --pods "$(PODS)" --source "$(or $(SOURCE),api)" --node-name "$(NODE_NAME)" \
	--pod-manifest-path "$(MANIFEST_PATH)" --allow-privileged "$(ALLOW_PRIVILEGED)" --feature-gates "$(FEATURE_GATES)"

.PHONY: hash
hash: $(TOOLCHAIN) ## Container hashes a build writes: make -s hash VERSION=1.9.11 VARIANT=vanilla PODS=pods.yaml [SOURCE=static]
	@$(CLI) hash --release "$(VERSION)" --variant "$(VARIANT)" $(POD_FLAGS)

.PHONY: preflight
preflight: $(TOOLCHAIN) ## Which containers a switch recreates: make preflight FROM=1.7.5 TO=1.9.11 PODS=pods.yaml [FORMAT=json] [FROM_VARIANT=patched] [NODE=unix:///var/run/docker.sock]
	@$(CLI) preflight --from "$(FROM)" --from-variant "$(or $(FROM_VARIANT),vanilla)" --to "$(TO)" \
	  --docker-endpoint "$(NODE)" --format "$(or $(FORMAT),table)" $(POD_FLAGS)

.PHONY: smoke
smoke: $(TOOLCHAIN) ## Check a built kubelet starts cAdvisor and dials its runtime (Docker; from 1.24 the CRI endpoint of its dockershim): make smoke VERSION=1.9.11 [VARIANT=...]
	@$(CLI) smoke --release "$(VERSION)" --variant "$(VARIANT)"

.PHONY: releases
releases: $(TOOLCHAIN) ## List the pinned releases
	@$(CLI) releases

##@ Test

.PHONY: test
test: $(TOOLCHAIN) ## The presubmit's checks (docs/e2e.md, the rule): unit tests, vet, gofmt; every build target whose inputs differ from CHECKSUMS.inputs built, checked against CHECKSUMS, its lock, in-tree tests and cross-checks (toolchain prove --changed); the TLS suite
	scripts/prereqs.sh
	$(CLI) machine save --under $(abspath $(OUTPUT)) $(OUTPUT)/machine/test.json
	@unformatted="$$(gofmt -l scripts tools e2e)"; test -z "$$unformatted" || { echo "not gofmt-ed: $$unformatted" >&2; exit 1; }
# -count=1: go test caches a result without tracking files outside the
# module (versions.yaml, locks/, patches/), so a cached pass could hide
# a test those files now fail (a clean clone at the same path builds the
# same test binary); uncached, the three modules' tests take about 30 s.
	cd scripts && go vet ./... && go test -count=1 ./...
	cd tools && go vet ./... && go test -count=1 ./...
	cd e2e && go vet ./... && go test -count=1 ./framework ./conformance ./cmd/conformance
	$(CLI) prove --changed
	E2E_RUN=$(or $(E2E_RUN),local) e2e/run.sh tls
	$(CLI) machine check $(OUTPUT)/machine/test.json

.PHONY: test-release
# SHARD is VERSION, or VERSIONS' releases as one shard: each one's prove and
# packages, and every spec labelled with any of them run once (their shards
# one after another would run the specs they share once each).
SHARD = $(strip $(or $(VERSIONS),$(VERSION)))
comma := ,
empty :=
space := $(empty) $(empty)
test-release: $(TOOLCHAIN) ## One release's shard of make test-all: its targets built from scratch and checked against CHECKSUMS, its lock, in-tree tests and cross-checks with its neighbours, every e2e spec labelled with it (extended ones and rehearsals too), its packages: make test-release VERSION=1.9.11 (or several as one, each spec once: VERSIONS="1.13.12 1.14.10")
	@[ -n "$(SHARD)" ] || { echo "make test-release: VERSION=<release> or VERSIONS=\"<release> ...\" is required (make releases)" >&2; exit 2; }
	scripts/prereqs.sh
	$(CLI) machine save --under $(abspath $(OUTPUT)) $(OUTPUT)/machine/test-release.json
	for v in $(SHARD); do $(CLI) prove --release "$$v" || exit 1; done
	E2E_RUN=release-$(subst $(space),-,$(SHARD)) E2E_SPECS=release:$(subst $(space),$(comma),$(SHARD)) e2e/run.sh upgrade inspect-hang orphan tls rehearsal rehearsal-1.8 nodes \
	  $$($(CLI) releases --conformance | grep -qxF $(addprefix -e ,$(SHARD)) && echo conformance)
	for v in $(SHARD); do $(MAKE) --no-print-directory package VERSION=$$v && $(MAKE) --no-print-directory check-package VERSION=$$v || exit 1; done
	$(CLI) machine check $(OUTPUT)/machine/test-release.json

.PHONY: test-all
test-all: $(TOOLCHAIN) ## The periodic: make test, every release's shard (make test-release), every series on every release (verify), the signed repositories of 1.9, 1.13 and 1.23 checked with dnf and apt (official 1.9 and 1.13 nodes upgraded and rolled back)
	$(MAKE) --no-print-directory test
	@releases=$$($(CLI) releases --names) && for v in $$releases; do \
	  $(MAKE) --no-print-directory test-release VERSION=$$v || exit 1; done
	$(MAKE) --no-print-directory verify
	$(MAKE) --no-print-directory repo VERSIONS="1.9.11 1.13.12 1.23.17"
	$(MAKE) --no-print-directory check-repo VERSIONS="1.9.11 1.13.12 1.23.17"

.PHONY: bench-hash
bench-hash: $(TOOLCHAIN) ## Benchmark: hash 10,000 containers with a release's helper: make bench-hash VERSION=1.9.11
	@$(CLI) bench-hash --release "$(VERSION)" --variant "$(VARIANT)" --count 10000

.PHONY: bench-hash-container
bench-hash-container: $(TOOLCHAIN) ## Benchmark: patched vs vanilla HashContainer in the 1.9.11 tree (go test -bench)
	@$(CLI) test-tree --release 1.9.11 --run '^$$' --bench .

.PHONY: test-tree
test-tree: $(TOOLCHAIN) ## In-tree tests of every package a release's fixes touch: make test-tree VERSION=1.9.11 [RUN=regexp]
	@$(CLI) test-tree --release "$(VERSION)" --run "$(RUN)"

.PHONY: verify
verify: $(TOOLCHAIN) ## Apply every series to every release mapped to it and compile both variants; check generated files and locks
	@$(CLI) verify

.PHONY: e2e
e2e: $(TOOLCHAIN) ## Node e2e on real Docker Engines, specs side by side (builds what the chosen specs run; engines per process): make e2e [FOCUS="suite ..." of upgrade inspect-hang orphan nodes rehearsal tls rehearsal-1.8 conformance] [E2E_SPECS=ci|release:<release>[,<release>...]|extended|all] [E2E_PROCS=n] [E2E_RUN=name]
	@scripts/prereqs.sh
	e2e/run.sh $(FOCUS)

.PHONY: conformance
conformance: $(TOOLCHAIN) ## Upstream's node conformance suite judges a kubelet: make conformance VERSION=1.9.11 [VARIANT=patched|vanilla] [KUBELET=<release>] [KUBELET_BINARY=path] [FOCUS=re] [SKIP=re]
	@scripts/prereqs.sh
	@$(CLI) conformance-suite --release "$(VERSION)"
	@[ -n "$(KUBELET_BINARY)" ] || $(CLI) kubelet --release "$(or $(KUBELET),$(VERSION))" --variant "$(VARIANT)"
	@tools/engine-up.sh
	cd e2e && go build -o ../$(OUTPUT)/bin/conformance ./cmd/conformance
	$(OUTPUT)/bin/conformance --suite "$(VERSION)" --kubelet "$(or $(KUBELET),$(VERSION))" --variant "$(VARIANT)" \
	  --kubelet-binary "$(KUBELET_BINARY)" $(if $(REJUDGE),--rejudge) --focus '$(or $(FOCUS),\[Conformance\])' --skip '$(SKIP)'

.PHONY: conformance-compare
conformance-compare: $(TOOLCHAIN) ## Both variants under upstream's node conformance, same seed, differing specs retried: make conformance-compare VERSION=1.9.11 [KUBELET=<release>] [KUBELET_BINARY=path, in place of patched] [FOCUS=re] [SKIP=re] [REJUDGE=1: judge the last reports again]
	@scripts/prereqs.sh
	@$(CLI) conformance-suite --release "$(VERSION)"
	@[ -n "$(KUBELET_BINARY)" ] || $(CLI) kubelet --release "$(or $(KUBELET),$(VERSION))" --variant patched
	@$(CLI) kubelet --release "$(or $(KUBELET),$(VERSION))" --variant vanilla
	@tools/engine-up.sh
	cd e2e && go build -o ../$(OUTPUT)/bin/conformance ./cmd/conformance
	$(OUTPUT)/bin/conformance --compare --suite "$(VERSION)" --kubelet "$(or $(KUBELET),$(VERSION))" \
	  --kubelet-binary "$(KUBELET_BINARY)" $(if $(REJUDGE),--rejudge) --focus '$(or $(FOCUS),\[Conformance\])' --skip '$(SKIP)'

.PHONY: engine-down
engine-down: ## Stop the Docker Engine of make conformance (_output/engine; e2e/run.sh stops the engines it starts)
	tools/engine-down.sh

.PHONY: bench-build
bench-build: $(TOOLCHAIN) ## Benchmark: cold build split by stage, warm no-op, rebuild ratio: make bench-build VERSION=1.9.11
	@$(CLI) bench-build --release "$(VERSION)" --variant "$(VARIANT)"

##@ Rehearsal

# The rehearsal's cluster: FROM's kubelets (vanilla) on NODES kind-style
# nodes, switched FROM -> TO -> FROM -> TO. Through make any failure is 2;
# _output/rehearsal/report.json holds the verdict.
FROM ?=
TO ?=
NODES ?= 2
MANIFESTS ?=
IMAGES ?=
# Faults injected on the first node (docs/rehearsal.md): hang, orphan or hang,orphan.
FAULTS ?=
# Which of the machine's rehearsals (0..30; docs/rehearsal.md): each has
# its own bridge, subnet and ports, so instances run side by side.
INSTANCE ?= 0

.PHONY: rehearsal
rehearsal: $(TOOLCHAIN) ## Upgrade rehearsal on kind-style nodes: make rehearsal FROM=1.7.5 TO=1.9.11 [VARIANT=patched|vanilla] [NODES=2] [MANIFESTS=dir] [IMAGES="img:tag ..."] [FAULTS=hang,orphan] [INSTANCE=0]
	@scripts/prereqs.sh
	@$(CLI) machine save $(OUTPUT)/machine/rehearsal-$(INSTANCE).json
	@rc=0; $(CLI) rehearsal run --instance "$(INSTANCE)" --from "$(FROM)" --to "$(TO)" --variant "$(VARIANT)" --nodes "$(NODES)" \
	  --manifests "$(MANIFESTS)" --images "$(IMAGES)" --faults "$(FAULTS)" || rc=$$?; \
	  $(CLI) machine check $(OUTPUT)/machine/rehearsal-$(INSTANCE).json && exit $$rc

.PHONY: rehearsal-up
rehearsal-up: $(TOOLCHAIN) ## Leave a rehearsal cluster running: make rehearsal-up FROM=1.7.5 [NODES=2] [INSTANCE=0] (prints export KUBECONFIG=...)
	@scripts/prereqs.sh
	@$(CLI) rehearsal up --instance "$(INSTANCE)" --from "$(FROM)" --nodes "$(NODES)"

.PHONY: rehearsal-down
rehearsal-down: $(TOOLCHAIN) ## Remove everything the rehearsal created (nodes, volumes, control plane, its engine, bridge) [INSTANCE=0]
	@$(CLI) rehearsal down --instance "$(INSTANCE)"

##@ Packaging

.PHONY: package
package: $(TOOLCHAIN) ## Release artifacts (tarballs, SBOM, .deb, spec, SRPM, RPM, Debian source, SHA256SUMS) in _output/<release>/dist/: make package VERSION=1.9.11 [VARIANT=...]
	@scripts/prereqs.sh
	@$(CLI) package --release "$(VERSION)" --variant "$(VARIANT)"

.PHONY: check-package
check-package: $(TOOLCHAIN) ## Check a release's artifacts: rebuilds from the source tarball and the SRPM (same sha256), SBOM, .deb and RPM installed in scratch roots, Debian source = built tree
	@scripts/prereqs.sh
	@$(CLI) check-package --release "$(VERSION)" --variant "$(VARIANT)"

# make repo: which releases (default: every release built here), the
# signing key (a key id or a secret key file; default: a throwaway key)
# and where the repositories will be served, each minor under
# <REPO_URL>/v<minor> (default: file:// of _output/repo).
VERSIONS ?=
GPG_KEY ?=
REPO_URL ?=

.PHONY: repo
repo: $(TOOLCHAIN) ## Signed yum and apt repositories of releases' packages (both variants), one per minor in _output/repo/v<minor>/, packaging what is not packaged: make repo [VERSIONS="1.9.11 1.18.6"] [GPG_KEY=<key id or file>] [REPO_URL=https://...]
	@scripts/prereqs.sh
	@$(CLI) repo --releases "$(VERSIONS)" --gpg-key "$(GPG_KEY)" --url "$(REPO_URL)"

.PHONY: check-repo
check-repo: $(TOOLCHAIN) ## Check _output/repo/ with dnf and apt in scratch roots: each minor's alone, installs, tampered copies refused, nodes running the official packages (stand-ins) upgraded to ours and rolled back, the upgrade from the previous package revision (built from its commit): make check-repo [VERSIONS=...]
	@scripts/prereqs.sh
	@$(CLI) check-repo --releases "$(VERSIONS)"

.PHONY: export-patches
export-patches: $(TOOLCHAIN) ## Write a release's series as quilt patches: make export-patches VERSION=1.9.11 OUT=<dir> [VARIANT=...]
	@$(CLI) export-patches --release "$(VERSION)" --variant "$(VARIANT)" --out "$(OUT)"

##@ Helpers

# The CLI is rebuilt whenever its sources change; go build itself is the
# up-to-date check, so this costs well under a second when warm.
.PHONY: $(TOOLCHAIN)
$(TOOLCHAIN):
	@cd scripts && go build -o ../$(TOOLCHAIN) ./cmd/toolchain

.PHONY: hash-schemas
LEGACY_TYPES := overlay/legacy-types/pkg/kubelet/legacytypes
hash-schemas: $(TOOLCHAIN) ## Regenerate 1.7's and 1.8's type graphs (container hash, static pod UID), as Go >= 1.9 and as the official go1.8.3 builds print them, the Container graphs of 1.9..1.11 and 1.13..1.16 (1.10's: 1.11's too; 1.13's: 1.12's; 1.16's: 1.17's and 1.18's; 1.9's and 1.11's in the overlay that alone uses them, container-hash-k111, 1.10's in k19-fixes', so that adding them changed no other release's inputs), and the internal Pod graphs of 1.9..1.16, 1.18 and 1.20..1.25 (static pod UIDs; 1.9's, 1.10's and 1.11's in static-pod-uid-graphs-k19, which 1.9.11..1.12.10 alone carry; all from 1.13 with their meta/v1: 1.24 renames ObjectMeta.ClusterName, 1.25 drops it), from those releases' trees
	@$(CLI) gen-hash-schema --module-version v1.7.5 --out $(LEGACY_TYPES)/v17/v1/types.go
	@$(CLI) gen-hash-schema --module-version v1.7.5 --schema container-official --out $(LEGACY_TYPES)/v17/official/v1/types.go
	@$(CLI) gen-hash-schema --module-version v1.7.5 --schema internal-pod --out $(LEGACY_TYPES)/v17/api/types.go
	@$(CLI) gen-hash-schema --module-version v1.7.5 --schema internal-pod-official --out $(LEGACY_TYPES)/v17/official/api/types.go
	@$(CLI) gen-hash-schema --module-version v1.7.5 --schema meta-official --out $(LEGACY_TYPES)/v17/official/meta/types.go
	@$(CLI) gen-hash-schema --module-version v1.8.15 --out $(LEGACY_TYPES)/v18/v1/types.go
	@$(CLI) gen-hash-schema --module-version v1.8.15 --schema container-official --out $(LEGACY_TYPES)/v18/official/v1/types.go
	@$(CLI) gen-hash-schema --module-version v1.8.15 --schema internal-pod --out $(LEGACY_TYPES)/v18/api/types.go
	@$(CLI) gen-hash-schema --module-version v1.8.15 --schema internal-pod-official --out $(LEGACY_TYPES)/v18/official/api/types.go
	@$(CLI) gen-hash-schema --module-version v1.8.15 --schema meta-official --out $(LEGACY_TYPES)/v18/official/meta/types.go
	@$(CLI) gen-hash-schema --module-version v1.12.10 --schema internal-core-pod --out $(LEGACY_TYPES)/v112/core/types.go
	@$(CLI) gen-hash-schema --module-version v1.9.11 --out overlay/container-hash-k111/pkg/kubelet/legacytypes/v19/v1/types.go
	@$(CLI) gen-hash-schema --module-version v1.10.13 --out overlay/k19-fixes/pkg/kubelet/legacytypes/v110/v1/types.go
	@$(CLI) gen-hash-schema --module-version v1.11.10 --out overlay/container-hash-k111/pkg/kubelet/legacytypes/v111/v1/types.go
	@$(CLI) gen-hash-schema --module-version v1.9.11 --schema internal-core-pod --out overlay/static-pod-uid-graphs-k19/pkg/kubelet/legacytypes/v19/core/types.go
	@$(CLI) gen-hash-schema --module-version v1.10.13 --schema internal-core-pod --out overlay/static-pod-uid-graphs-k19/pkg/kubelet/legacytypes/v110/core/types.go
	@$(CLI) gen-hash-schema --module-version v1.11.10 --schema internal-core-pod --out overlay/static-pod-uid-graphs-k19/pkg/kubelet/legacytypes/v111/core/types.go
	@$(CLI) gen-hash-schema --module-version v1.13.12 --out $(LEGACY_TYPES)/v113/v1/types.go
	@$(CLI) gen-hash-schema --module-version v1.14.10 --out $(LEGACY_TYPES)/v114/v1/types.go
	@$(CLI) gen-hash-schema --module-version v1.15.12 --out $(LEGACY_TYPES)/v115/v1/types.go
	@$(CLI) gen-hash-schema --module-version v1.16.15 --out $(LEGACY_TYPES)/v116/v1/types.go
	@$(CLI) gen-hash-schema --module-version v1.13.12 --schema internal-core-pod-meta --out $(LEGACY_TYPES)/v113/core/types.go
	@$(CLI) gen-hash-schema --module-version v1.13.12 --schema meta --out $(LEGACY_TYPES)/v113/meta/types.go
	@$(CLI) gen-hash-schema --module-version v1.14.10 --schema internal-core-pod-meta --out $(LEGACY_TYPES)/v114/core/types.go
	@$(CLI) gen-hash-schema --module-version v1.14.10 --schema meta --out $(LEGACY_TYPES)/v114/meta/types.go
	@$(CLI) gen-hash-schema --module-version v1.15.12 --schema internal-core-pod-meta --out $(LEGACY_TYPES)/v115/core/types.go
	@$(CLI) gen-hash-schema --module-version v1.15.12 --schema meta --out $(LEGACY_TYPES)/v115/meta/types.go
	@$(CLI) gen-hash-schema --module-version v1.16.15 --schema internal-core-pod-meta --out $(LEGACY_TYPES)/v116/core/types.go
	@$(CLI) gen-hash-schema --module-version v1.16.15 --schema meta --out $(LEGACY_TYPES)/v116/meta/types.go
	@$(CLI) gen-hash-schema --module-version v1.18.6 --schema internal-core-pod-meta --out $(LEGACY_TYPES)/v118/core/types.go
	@$(CLI) gen-hash-schema --module-version v1.18.6 --schema meta --out $(LEGACY_TYPES)/v118/meta/types.go
	@$(CLI) gen-hash-schema --module-version v1.20.15 --schema internal-core-pod-meta --out $(LEGACY_TYPES)/v120/core/types.go
	@$(CLI) gen-hash-schema --module-version v1.20.15 --schema meta --out $(LEGACY_TYPES)/v120/meta/types.go
	@$(CLI) gen-hash-schema --module-version v1.21.14 --schema internal-core-pod-meta --out $(LEGACY_TYPES)/v121/core/types.go
	@$(CLI) gen-hash-schema --module-version v1.21.14 --schema meta --out $(LEGACY_TYPES)/v121/meta/types.go
	@$(CLI) gen-hash-schema --module-version v1.22.17 --schema internal-core-pod-meta --out $(LEGACY_TYPES)/v122/core/types.go
	@$(CLI) gen-hash-schema --module-version v1.22.17 --schema meta --out $(LEGACY_TYPES)/v122/meta/types.go
	@$(CLI) gen-hash-schema --module-version v1.23.17 --schema internal-core-pod-meta --out $(LEGACY_TYPES)/v123/core/types.go
	@$(CLI) gen-hash-schema --module-version v1.23.17 --schema meta --out $(LEGACY_TYPES)/v123/meta/types.go
	@$(CLI) gen-hash-schema --module-version v1.24.17 --schema internal-core-pod-meta --out $(LEGACY_TYPES)/v124/core/types.go
	@$(CLI) gen-hash-schema --module-version v1.24.17 --schema meta --out $(LEGACY_TYPES)/v124/meta/types.go
	@$(CLI) gen-hash-schema --module-version v1.25.16 --schema internal-core-pod-meta --out $(LEGACY_TYPES)/v125/core/types.go
	@$(CLI) gen-hash-schema --module-version v1.25.16 --schema meta --out $(LEGACY_TYPES)/v125/meta/types.go

.PHONY: uid-goldens
uid-goldens: $(TOOLCHAIN) ## Regenerate what the official go1.8.3-built 1.7 and 1.8 kubelets derive for the test manifests (static pod UIDs, container hashes): vanilla 1.7.5's and 1.8.15's own dumps rewritten into go1.8.3's layout
	@$(CLI) gen-uid-goldens --dir $(LEGACY_TYPES)/testdata/official

.PHONY: clean
clean: $(TOOLCHAIN) ## Remove _output/ (trees, binaries); refused, naming them, while anything under it is mounted or an engine or control plane of ours runs from it; the Go caches stay
	@$(CLI) clean

.PHONY: help
help: ## Show this help
	@awk 'BEGIN {FS = ":.*##"} /^##@/ {printf "\n%s\n", substr($$0, 5)} /^[a-z-]+:.*##/ {printf "  %-18s %s\n", $$1, $$2}' $(MAKEFILE_LIST)
