"""The PHP worker: runs a Drupal codebase's check executors for the runs a user asks for (SPEC 4).

One `PhpWorker` serves a whole run: it starts one PHP process at its first call, reuses it for
every later call, and stops it at `close()` (it is a context manager). Calls are
`applies(class, arguments, check)` and `execute(class, arguments, check, response, context)`,
where `arguments` is the service's services.yml `arguments:` list (or map of `$name` keys).

**The process.** `php.command` (default `php`) plus `-r <loader>`: the bootstrap travels as code,
never as a host file path, so a wrapper that runs PHP elsewhere (`ddev exec php`) works. The
loader contains no `$`, backtick, backslash or double quote, so it survives a wrapper that joins
its arguments into a `bash -c` line the way `ddev exec` does without `--raw`. The working directory
is the Drupal project folder, and every codebase path is passed relative to it, so the same
paths hold in a container as long as the wrapper runs PHP in the project folder there. A ddev
project may set `working_dir` to its web root (Drupal CMS does), so the robust command is
`ddev exec --dir /var/www/html php`. The process gets its own process group; a timed-out or
stuck worker is killed as a group, so a wrapper's children die with it. A PHP inside a container
is out of reach of that signal: there the worker's own CPU-time limit (`runTimeoutSeconds` + 1)
ends a busy loop, and the closed pipe ends it when it next writes. POSIX only.

**The wire.** The hosts' one dialect (`hosts.process`: JSON-RPC-shaped JSON lines, PHP's after a
`\\x02` byte, so that whatever an executor writes to STDOUT itself is logged and skipped):

- `{"method": "hello", "params": {"php": "8.2.1", "id": 80201, "pid": 42}}` first, from the
  loader (the version check);
- the request `init` (`{"psr4": {prefix: folder}, "composerAutoload": path|null, "timeLimit": s}`)
  answered `{"ready": true}`, or an error when composer's autoloader fails;
- the requests `applies` and `execute` (`{"class", "arguments", "check"[, "response",
  "context"]}`), answered `{"applies": bool}` or `{"outcome": {checkId, kind, score, passed,
  reason}}`, or an error `{"message"}`; either with `"output"` (what the executor printed), and an
  error with `"exited": true` when the executor ended the process (fatal error, `exit()`);
- PHP's own requests `chrf` (`{"hypothesis", "references"}`) and `resolve` (`{"path",
  "question"}`) in the middle of a call: a bridged service asks Python, which answers before PHP
  goes on.

**Decisions where SPEC 4 is silent.**

- A PHP exception, fatal error, `exit()`, wrong return type, missing class or class without
  `CheckExecutorInterface` fails the check (`execute`) or raises `PhpCallFailed` (`applies`)
  with the cause; `applies()` is read as PHP's truthiness, as `if ($executor->applies($check))`.
- `NotRunnable` (never a failure) covers the two skips: `PhpUnavailable` (no PHP, PHP older than
  8.1, a wrapper that does not start PHP, composer's autoloader failing) and `NeedsDrupal` (an
  argument only a site has). Unavailability is remembered for the life of the worker: a run does
  not retry a missing PHP for every check.
- A constructor may type a bridged service with ai_eval's own class or interface: the worker
  generates a subclass or implementation of it whose bridged method calls Python and whose other
  methods fail as missing bridge methods. With no ai_eval in the codebase, a missing
  `Drupal\\ai_eval\\` type so named is declared as an empty interface.
- ai_eval's own `CheckOutcome` (when its `src/` is among the modules) is read by reflection:
  properties named checkId/check_id/id, kind, score, passed/pass and reason, else the first five
  in declaration order.
- An unlimited `memory_limit` (the CLI default) becomes 512M in the worker; a call's time counts
  everything from sending the request to the answer, Python's chrF included; starting PHP has
  its own bound (`start_timeout`, 30 s), since a wrapper such as ddev may take seconds.
- Symfony's escapes hold in arguments: `@@x` is the string `@x`, `%%` is `%`; `@?id` is NULL
  unless it names a bridged service, and `@!id` counts as `@id`. A map of `$name` keys passes
  named arguments. One instance per class and arguments lives as long as its process.
- What an executor prints (echo, STDERR, STDOUT written directly) goes to this module's logger
  at INFO, never into a result.
- `close()` from another thread kills the process at once: the call in progress fails with
  "the PHP worker was closed ...", and later calls raise `RuntimeError`.
"""

from __future__ import annotations

import base64
import functools
import json
import logging
import math
import os
import re
import shlex
import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from ai_eval_lsp.core.api import CheckOutcome, Services
from ai_eval_lsp.core.evaluate import CheckSkipped
from ai_eval_lsp.drupal.codebase import PhpExecutor
from ai_eval_lsp.hosts.process import (
    CallError,
    Closed,
    Closing,
    Exited,
    Garbled,
    Host,
    Process,
    Timeout,
    Unsendable,
)

__all__ = [
    "BRIDGED_SERVICES",
    "NeedsDrupal",
    "NotRunnable",
    "PhpCallFailed",
    "PhpUnavailable",
    "PhpWorker",
    "unrunnable_reason",
]

_LOG = logging.getLogger(__name__)

BRIDGED_SERVICES = ("ai_eval.chrf_scorer", "ai_eval.check_template_resolver")
"""The services PHP executors receive as objects that call back to Python."""

MINIMUM_PHP = 80100
_PARAMETER = re.compile(r"%[^%\s]+%")


class NotRunnable(CheckSkipped):
    """A PHP executor cannot run in the editor: its checks are skipped with this cause."""


class PhpUnavailable(NotRunnable):
    """No usable PHP: the command is missing, does not start PHP, or runs PHP older than 8.1."""


class NeedsDrupal(NotRunnable):
    """The executor's constructor needs a service or parameter that only a running site has."""


class PhpCallFailed(Exception):
    """`applies()` gave no answer: it threw, timed out, or the class cannot be used."""


def unrunnable_reason(arguments: Any) -> str | None:
    """Why an executor with these services.yml `arguments` cannot run in the editor, or None.

    Pure (starts no PHP): "needs the Drupal service `@entity_type.manager`".
    """
    services: list[str] = []
    parameters: list[str] = []
    others: list[str] = []
    for value in _leaves(arguments):
        if isinstance(value, str):
            if value.startswith("@") and not value.startswith("@@"):
                optional = value.startswith("@?")
                service = value[1:].lstrip("?!")
                if service not in BRIDGED_SERVICES and not optional:
                    services.append(f"`@{service}`")
            else:
                parameters += [f"`{name}`" for name in _PARAMETER.findall(value.replace("%%", ""))]
        elif value is not None and not isinstance(value, bool | int | float):
            others.append(f"`{value!r}`")
    needs = [
        need for need in (_needs("Drupal service", services), _needs("Drupal parameter", parameters)) if need
    ]
    reasons = ["needs " + " and ".join(needs)] if needs else []
    if others:
        reasons.append(f"has a constructor argument the editor cannot build: {', '.join(others)}")
    return "; ".join(reasons) or None


def _leaves(value: Any) -> Iterator[Any]:
    if isinstance(value, Mapping):
        for item in value.values():
            yield from _leaves(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _leaves(item)
    else:
        yield value


def _needs(what: str, names: list[str]) -> str:
    unique = list(dict.fromkeys(names))
    if not unique:
        return ""
    return f"the {what}{'s' if len(unique) > 1 else ''} {', '.join(unique)}"


@functools.cache
def _loader() -> str:
    """The `-r` code: it reports the PHP version, then evaluates worker.php on PHP 8.1+.

    Written without `$`, backticks, backslashes or double quotes (chr(34) is the quote), so
    that a wrapper passing it through `bash -c "..."` leaves it as it is.
    """
    source = resources.files("ai_eval_lsp.hosts").joinpath("worker.php").read_text("utf-8")
    # Only the tag goes: eval()'d line numbers stay worker.php's.
    code = base64.b64encode(source.removeprefix("<?php").encode("utf-8")).decode("ascii")
    hello = (
        "sprintf(strtr('{QmethodQ:QhelloQ,QparamsQ:{QphpQ:Q%sQ,QidQ:%d,QpidQ:%d}}', 'Q', chr(34)), "
        "PHP_VERSION, PHP_VERSION_ID, getmypid())"
    )
    return (
        f"fwrite(STDOUT, chr(2) . {hello} . chr(10)); "
        f"if (PHP_VERSION_ID >= {MINIMUM_PHP}) {{ eval(base64_decode('{code}')); }}"
    )


class PhpWorker(Closing):
    """A PHP process that runs a Drupal codebase's check executors, started at the first call.

    `project_root` is the Drupal project folder: the worker's working directory, and the folder
    that the PSR-4 folders (`{"Drupal\\\\my_module\\\\": "web/modules/custom/my_module/src"}`) and
    `composer_autoload` are relative to (absolute paths are made relative to it). Thread-safe:
    calls from several threads take turns; `close()` from another thread ends a call in progress.
    """

    def __init__(
        self,
        project_root: str | os.PathLike[str],
        psr4: Mapping[str, str | os.PathLike[str]],
        *,
        command: Sequence[str] = ("php",),
        timeout: float = 10.0,
        services: Services | None = None,
        composer_autoload: str | os.PathLike[str] | None = None,
        start_timeout: float = 30.0,
    ) -> None:
        if not command:
            raise ValueError("the PHP command is empty")
        self._root = Path(project_root)
        self._psr4 = {prefix: self._relative(folder) for prefix, folder in psr4.items()}
        self._composer_autoload = None if composer_autoload is None else self._relative(composer_autoload)
        self._command = tuple(command)
        self._timeout = timeout
        self._start_timeout = start_timeout
        self._services = services or Services()
        self._unavailable: PhpUnavailable | None = None
        self._closed = False
        self._host = Host(self._start, serve=self._serve, allow_nan=False)
        self.php_version: str | None = None

    @property
    def pid(self) -> int | None:
        """The id of the process started from `command` (a wrapper's, when there is one)."""
        return self._host.pid

    @property
    def php_pid(self) -> int | None:
        """The id PHP reports for itself: a wrapper's child, or a process in a container."""
        process = self._host.process
        return process.php_pid if process else None

    def version(self) -> str:
        """The version of the PHP the worker runs, starting it if need be; raises `PhpUnavailable`."""
        self._host.started()
        return str(self.php_version)

    def applies(self, class_name: str, arguments: Any, check: Mapping[str, Any]) -> bool:
        """Whether the executor claims the check.

        Raises `NotRunnable` (skip) or `PhpCallFailed` (the cause, when PHP gave no answer).
        """
        where = f"`{class_name}::applies()`"
        request = {"class": class_name, "arguments": arguments, "check": check}
        try:
            answer = self._call("applies", request, where)
        except _CallFailed as failed:
            raise PhpCallFailed(str(failed)) from None
        if "error" in answer:
            raise PhpCallFailed(str(answer["error"]))
        return bool(answer.get("applies"))

    def execute(
        self,
        class_name: str,
        arguments: Any,
        check: Mapping[str, Any],
        response: str,
        context: Mapping[str, Any],
    ) -> CheckOutcome:
        """The executor's outcome; any failure (exception, fatal error, timeout, wrong return
        type, missing class) is a failed outcome with the cause. Raises `NotRunnable` (skip)."""
        where = f"`{class_name}::execute()`"
        request = {
            "class": class_name,
            "arguments": arguments,
            "check": check,
            "response": response,
            "context": context,
        }
        try:
            answer = self._call("execute", request, where)
        except _CallFailed as failed:
            return CheckOutcome.of(check, False, str(failed))
        if "error" in answer:
            return CheckOutcome.of(check, False, str(answer["error"]))
        return _outcome(answer.get("outcome"), check, where)

    def close(self) -> None:
        """Stops the process, if any; a call in progress on another thread fails at once."""
        self._closed = True
        self._host.close()

    def _call(self, method: str, params: dict[str, Any], where: str) -> dict[str, Any]:
        """PHP's answer to one request: its result, or `{"error": reason}`. Raises `_CallFailed`
        when there is none."""
        reason = unrunnable_reason(params["arguments"])
        if reason:
            raise NeedsDrupal(reason)
        if self._closed:
            raise RuntimeError("this PHP worker is closed")
        try:
            answer = self._host.call(method, params, self._timeout)
        except CallError as error:
            answer = {"error": str(error), "output": error.data.get("output")}
            if error.data.get("exited"):  # the executor ended PHP: the next call starts a new one
                self._host.discard()
        except Closed:
            raise _CallFailed(f"the PHP worker was closed while {where} ran") from None
        except Unsendable as err:
            raise _CallFailed(f"{where} cannot be called: its input cannot be sent as JSON ({err})") from None
        except Timeout:
            raise _CallFailed(
                f"{where} did not finish within {self._timeout:g} s (runTimeoutSeconds); "
                "the PHP worker was stopped and the next check starts a new one"
            ) from None
        except Exited as exited:
            raise _CallFailed(
                f"the PHP worker exited with status {exited.status} while {where} ran"
                f"{': ' + exited.cause if exited.cause else ''}; the next check starts a new one"
            ) from None
        except Garbled as garbled:
            raise _CallFailed(
                f"the PHP worker sent {garbled} while {where} ran; it was stopped and the next "
                "check starts a new one"
            ) from None
        if not isinstance(answer, dict):
            raise _CallFailed(f"the PHP worker answered {where} with {answer!r}")
        if answer.get("output"):
            _LOG.info("%s printed (kept out of the protocol): %s", where, str(answer["output"])[:2000])
        return answer

    def _start(self) -> Process:
        if self._unavailable is not None:
            raise self._unavailable
        try:
            return self._spawn()
        except PhpUnavailable as unavailable:
            self._unavailable = unavailable
            raise

    def _spawn(self) -> Process:
        shown = shlex.join(self._command)
        started = time.monotonic()
        try:
            popen = subprocess.Popen(
                [*self._command, "-r", _loader()],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=self._root,
                start_new_session=True,
            )
        except FileNotFoundError as err:
            if err.filename is not None and Path(err.filename) == self._root:
                raise PhpUnavailable(f"the Drupal project folder `{self._root}` does not exist") from None
            program = self._command[0]
            where = "does not exist" if os.sep in program else "is not on PATH"
            raise PhpUnavailable(
                f"no PHP found: `{program}` {where} (set the `php.command` setting)"
            ) from None
        except OSError as err:
            raise PhpUnavailable(
                f"`{shown}` cannot be started: {err.strerror} (set the `php.command` setting)"
            ) from None
        process = Process(popen)
        deadline = started + self._start_timeout
        try:
            greeting = process.receive(deadline)
            hello = greeting.get("params") if greeting.get("method") == "hello" else None
            if not isinstance(hello, dict):
                raise Garbled(f"{greeting!r}, not a PHP version")
            version, version_id = str(hello.get("php")), hello.get("id")
            if not isinstance(version_id, int):
                raise Garbled(f"{hello!r}, not a PHP version")
            if version_id < MINIMUM_PHP:
                process.stop()
                raise PhpUnavailable(
                    f"`{shown}` runs PHP {version}; PHP executors need PHP 8.1 or later (set the `php.command` setting)"
                )
            process.php_pid = hello.get("pid") if isinstance(hello.get("pid"), int) else None
            config = {
                "psr4": self._psr4,
                "composerAutoload": self._composer_autoload,
                "timeLimit": math.ceil(self._timeout) + 1,
            }
            init = {"id": 0, "method": "init", "params": config}
            process.send((json.dumps(init) + "\n").encode("ascii"), deadline)
            ready = process.receive(deadline)
        except Timeout:
            process.kill()
            raise PhpUnavailable(
                f"`{shown}` did not start a PHP worker within {self._start_timeout:g} s"
            ) from None
        except Exited:
            status = process.stop()
            cause = process.cause() or "no output"
            raise PhpUnavailable(
                f"`{shown}` did not start a PHP worker (exit status {status}): {cause} (set the `php.command` setting)"
            ) from None
        except Garbled as garbled:
            process.kill()
            raise PhpUnavailable(
                f"`{shown}` did not start a PHP worker: it sent {garbled} (set the `php.command` setting)"
            ) from None
        if "error" in ready:
            process.stop()
            error = ready["error"]
            message = error.get("message") if isinstance(error, dict) else error
            raise PhpUnavailable(f"the PHP worker could not start: {message}")
        self.php_version = version
        _LOG.info(
            "PHP worker started: `%s`, PHP %s, pid %s, in %.0f ms",
            shown,
            version,
            popen.pid,
            (time.monotonic() - started) * 1000,
        )
        return process

    def _serve(self, method: str, params: Any) -> Any:
        """Python's answer for a bridged service."""
        if method == "chrf":
            hypothesis, references = params["hypothesis"], params["references"]
            return max((self._services.chrf(hypothesis, ref) for ref in references), default=0.0)
        if method == "resolve":
            return self._services.resolve(params["path"], params["question"])
        raise ValueError(f"no bridged service answers {method!r}")

    def _relative(self, path: str | os.PathLike[str]) -> str:
        if not os.path.isabs(path):
            return Path(path).as_posix()
        return Path(os.path.relpath(path, self._root)).as_posix()


class _CallFailed(Exception):
    """A call got no answer from PHP; the message is the check's reason."""


def _outcome(data: Any, check: Mapping[str, Any], where: str) -> CheckOutcome:
    if isinstance(data, dict):
        check_id, kind, score, passed, reason = (
            data.get(field) for field in ("checkId", "kind", "score", "passed", "reason")
        )
        if (
            isinstance(check_id, str)
            and isinstance(kind, str)
            and isinstance(score, int | float)
            and not isinstance(score, bool)
            and isinstance(passed, bool)
            and isinstance(reason, str)
        ):
            return CheckOutcome(check_id, kind, score, passed, reason)
    return CheckOutcome.of(
        check, False, f"the PHP worker answered {where} with a malformed outcome: {data!r}"
    )


class PhpCheckExecutor:
    def __init__(self, executor: PhpExecutor, kinds: frozenset[str], worker: PhpWorker | None) -> None:
        """Without a `worker` (diagnostics, which never run PHP) it claims its kinds by name alone."""
        self.executor, self.kinds, self.worker = executor, kinds, worker

    def applies(self, check: Mapping[str, Any]) -> bool:
        if check.get("kind") not in self.kinds:
            return False
        if self.worker is None:
            return True
        return self.worker.applies(self.executor.class_name, self.executor.arguments, check)

    def execute(self, check: Mapping[str, Any], response: str, context: Mapping[str, Any]) -> CheckOutcome:
        if self.worker is None:
            raise RuntimeError("a PHP executor runs only through a run's PHP worker")
        return self.worker.execute(
            self.executor.class_name, self.executor.arguments, check, response, context
        )
