# The front door. `make demo`: set-up, build, run the main job. `make test`: set-up, build every
# target, run every test. Both start with the idempotent set-up script.
.PHONY: demo test setup web npm-package check-matrix bench lint clean

demo: setup
	tools/demo

test: setup
	tools/run-tests

setup:
	tools/setup.sh

# The npm package (build/npm/package and its tarball), then the web demo at http://127.0.0.1:8080/.
npm-package: setup
	tools/build-npm-package

web: npm-package
	node tools/serve-web.mjs --port $${PORT:-8080}

check-matrix: setup
	tools/check-matrix

bench:
	tools/setup.sh --bench
	bench/run-all.sh

lint:
	tools/contract-lint --self-test && tools/contract-lint
	tools/layer-lint --self-test && tools/layer-lint

clean:
	rm -rf build
