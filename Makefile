# The front door. `make demo`: set-up, build, run the main job. `make test`: set-up, build every
# target, run every test. Both start with the idempotent set-up script.
.PHONY: demo test setup web npm-package check-matrix bench lint zoo clean

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

# Every torchvision classification model through from_torch_module, the largest ones included
# (make test leaves out those over 30M parameters), each exported and fine-tuned in the npm
# package too: tests/python/test_torch_zoo.py.
zoo: npm-package
	cmake --preset native >/dev/null && ninja -C build/native lockstep_python
	LOCKSTEP_BUILD=build LOCKSTEP_ZOO=all /usr/bin/python3 -m pytest -q -p no:cacheprovider tests/python/test_torch_zoo.py

bench:
	tools/setup.sh --bench
	bench/run-all.sh

lint:
	tools/contract-lint --self-test && tools/contract-lint
	tools/layer-lint --self-test && tools/layer-lint

clean:
	rm -rf build
