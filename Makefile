# The front door. `make demo`: set-up, build, run the main job. `make test`: set-up, build every
# target, run every test. Both start with the idempotent set-up script.
.PHONY: demo test setup check-matrix bench lint clean

demo: setup
	tools/demo

test: setup
	tools/run-tests

setup:
	tools/setup.sh

check-matrix: setup
	tools/check-matrix

bench: setup
	bench/run-gemm.sh

lint:
	tools/contract-lint --self-test && tools/contract-lint

clean:
	rm -rf build
