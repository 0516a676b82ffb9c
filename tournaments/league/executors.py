"""Executors play match specs somewhere and hand every finished game back to the caller's process at once.

    executor.run(specs, on_game)    # returns when every match is over; on_game runs here, once per game

LocalExecutor: worker processes on this machine, each playing one match at a time, each on its own share of
the CPUs (tournaments.league.placement: why that makes matches faster and fairer); each game's record travels
through a multiprocessing queue to this process as soon as the game ends (so the caller can commit it before
the match is over). A worker asks for a match when it has started and each time it has played one, and is
handed one then, so a league of any size queues at most one match per idle worker. Workers ignore Ctrl-C
(this process stops them) and stop, killing their bot processes, on SIGTERM or when this process dies. On an
interrupt (or a failed match) this process drops the matches not yet started, SIGTERMs the workers and takes
in the games they had finished while they stop; a worker still running after a few seconds, or any once a
second interrupt arrives, is killed with its bots at once.

DaskExecutor: one task per match on a Dask cluster (`pip install 'card-referee[dask]'`), reached over TLS
(tournaments.league.dask_tls); game records come back as plain data (msgpack of the record's fields, checked:
tournaments.league.dask_messages) through a distributed Queue of each worker's as each game ends, and the
organiser's client decodes msgpack only, so nothing a worker sends is ever unpickled here. Before any match
each worker reports its isolation level; one below the level the league requires is refused. Workers run
the bots' commands as resolved here (absolute paths, this Python for the built-in bots), so every worker
machine needs the project and the bots installed at the same paths. Ctrl-C here cancels the matches not yet
started; a match already running on a worker plays on to its end (Dask cannot stop a running task), but its
games that end after the stop are not stored, so a rerun plays them again. A worker lost mid-match makes
Dask retry the match on another accepted worker; the games it had already reported come back twice, and the
store keeps one.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import queue
import signal
import sys
import threading
import time
import uuid
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Sequence
from multiprocessing.queues import SimpleQueue
from typing import Any

from protocol.errors import BadInput, EnvironmentProblem
from referee.isolation.proctable import kill_with_sessions, live_processes
from referee.isolation.sandbox import STRENGTH, Isolation
from referee.match import run_match
from referee.records import GameRecord, MatchRecord, MatchSpec
from referee.wire.open_files import raise_open_files_limit

from .dask_messages import (
    Done,
    Game,
    Message,
    MessageError,
    Probe,
    decode,
    play_on_dask_worker,
    probe_isolation,
    probe_on_dask_worker,
)
from .placement import CpuSet, cpu_shares, pin, usable_cpus

GameSink = Callable[[GameRecord], None]
MatchRunner = Callable[..., MatchRecord]
"""run_match or a stand-in with its signature: runner(spec, on_game=callback) -> MatchRecord."""

_POLL_S = 0.2
_PARENT_CHECK_S = 0.5
_STOP_GRACE_S = 5.0
_CONNECT_TIMEOUT_S = 10.0
_PROBE_TIMEOUT_S = 60.0


class ExecutorError(EnvironmentProblem, RuntimeError):
    """A match could not be played (its runner raised), or a worker died."""


class DaskUnavailable(ExecutorError, ImportError):
    """--scheduler needs the optional extra dask[distributed]."""


class Executor(ABC):
    @abstractmethod
    def run(self, specs: Sequence[MatchSpec], on_game: GameSink) -> None:
        """Play every spec; call `on_game` in this process for each game as soon as it has ended.

        Raises ExecutorError when a match fails; KeyboardInterrupt stops every worker first. Games already
        handed to `on_game` stay handed; nothing else is promised about a run that raised.
        """


class LocalExecutor(Executor):
    """`concurrency` worker processes on this machine; with `pinned`, each keeps to its share of the CPUs."""

    def __init__(self, concurrency: int, runner: MatchRunner = run_match, *, pinned: bool = True) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, not {concurrency}")
        self.concurrency = concurrency
        self.runner = runner
        self.pinned = pinned

    def cpu_shares(self, workers: int) -> list[CpuSet | None]:
        """The CPUs of each of `workers` workers (None: wherever the system puts it)."""
        if not self.pinned:
            return [None] * workers
        return list(cpu_shares(workers, usable_cpus()))

    def run(self, specs: Sequence[MatchSpec], on_game: GameSink) -> None:
        if not specs:
            return
        context = multiprocessing.get_context("spawn")
        tasks: SimpleQueue[MatchSpec | None] = context.SimpleQueue()
        results: multiprocessing.Queue[tuple[Any, ...]] = context.Queue()
        workers = [
            context.Process(target=_work, args=(tasks, results, self.runner, os.getpid(), cpus), daemon=True)
            for cpus in self.cpu_shares(min(self.concurrency, len(specs)))
        ]
        submissions = _Submissions(tasks, specs)
        try:
            _start(workers)
            _collect(results, workers, submissions, on_game)
            for worker in workers:
                worker.join(_STOP_GRACE_S)
        finally:
            _stop(workers, results, on_game)


class _Submissions:
    """The specs not yet handed to the workers, put on `tasks` one each time a worker asks (when it has
    started, and after each match); once they are all handed out, a sentinel, which ends the worker that asked.
    The pipe so holds at most one spec per idle worker, however large the league. Being a SimpleQueue, it has
    no feeder thread: none is left at exit pushing specs to workers that are gone (which made a stopped league
    hang), nor dying halfway through its cleanup."""

    def __init__(self, tasks: SimpleQueue[MatchSpec | None], specs: Sequence[MatchSpec]):
        self._tasks = tasks
        self._waiting = iter(specs)
        self.count = len(specs)

    def submit(self) -> None:
        """Hand the worker that asked its next spec, or the sentinel."""
        self._tasks.put(next(self._waiting, None))


def _start(workers: Sequence[multiprocessing.process.BaseProcess]) -> None:
    with _sigint_ignored():
        for worker in workers:
            try:
                worker.start()
            except Exception as error:
                raise ExecutorError(f"cannot start a worker process: {type(error).__name__}: {error}") from error


@contextlib.contextmanager
def _sigint_ignored(*others: signal.Signals) -> Iterator[None]:
    """Ignore SIGINT (and `others`) for the few milliseconds of starting the workers: they inherit the
    disposition, so a Ctrl-C during their seconds of start-up is ignored there instead of printing their
    tracebacks. Also for the few milliseconds of killing the workers, which a further interrupt must not cut
    short."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, signal.SIG_IGN) for signum in (signal.SIGINT, *others)}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _collect(
    results: multiprocessing.Queue[tuple[Any, ...]],
    workers: Sequence[multiprocessing.process.BaseProcess],
    submissions: _Submissions,
    on_game: GameSink,
) -> None:
    finished = 0
    while finished < submissions.count:
        try:
            message = results.get(timeout=_POLL_S)
        except queue.Empty:
            dead = [worker for worker in workers if worker.exitcode not in (None, 0)]
            if dead:
                raise ExecutorError(f"a worker process died (exit code {dead[0].exitcode})") from None
            if all(worker.exitcode is not None for worker in workers):
                unreported = submissions.count - finished
                raise ExecutorError(f"the workers ended with {unreported} match(es) unreported") from None
            continue
        kind = message[0]
        if kind == "game":
            on_game(message[1])
        elif kind == "ready":
            submissions.submit()
        elif kind == "done":
            finished += 1
            submissions.submit()
        else:
            raise ExecutorError(f"match {message[1]} failed: {message[2]}")


def _stop(
    workers: Sequence[multiprocessing.process.BaseProcess],
    results: multiprocessing.Queue[tuple[Any, ...]],
    on_game: GameSink,
) -> None:
    """SIGTERM each live worker (it kills its bots and exits), handing `on_game` every game they had finished
    while they stop; then kill what is left after a grace, or at once when an interrupt (a second Ctrl-C)
    cuts the wait short. Workers never started (a start that failed) are skipped."""
    workers = [worker for worker in workers if worker.pid is not None]
    try:
        for worker in workers:
            if worker.is_alive():
                worker.terminate()
        if _take_in_while_stopping(workers, results, on_game):
            _take_in_rest(results, on_game)
    finally:
        with _sigint_ignored(signal.SIGTERM):
            _kill(workers)


def _take_in_while_stopping(
    workers: Sequence[multiprocessing.process.BaseProcess],
    results: multiprocessing.Queue[tuple[Any, ...]],
    on_game: GameSink,
) -> bool:
    """Hand `on_game` the games the stopping workers report (each sends what it has finished before it exits,
    so it exits only while this reads); True when they have all exited by themselves within the grace. False
    at once if one was killed by a signal: it may have died halfway through a message, which no read ends."""
    deadline = time.monotonic() + _STOP_GRACE_S
    while any(worker.is_alive() for worker in workers):
        if time.monotonic() > deadline or _any_killed(workers):
            return False
        with contextlib.suppress(queue.Empty):
            _take_in(results.get(timeout=_POLL_S), on_game)
    return not _any_killed(workers)


def _any_killed(workers: Sequence[multiprocessing.process.BaseProcess]) -> bool:
    return any(worker.exitcode is not None and worker.exitcode < 0 for worker in workers)


def _take_in_rest(results: multiprocessing.Queue[tuple[Any, ...]], on_game: GameSink) -> None:
    """What the workers left in the queue: whole messages, as each flushed its queue before it exited."""
    with contextlib.suppress(queue.Empty):
        while True:
            _take_in(results.get_nowait(), on_game)


def _take_in(message: tuple[Any, ...], on_game: GameSink) -> None:
    if message[0] == "game":
        on_game(message[1])


def _kill(workers: Sequence[multiprocessing.process.BaseProcess]) -> None:
    """Kill every worker still alive, its bots first (with their sessions: a bot's own children too)."""
    alive = {worker.pid for worker in workers if worker.is_alive()}
    if alive:
        kill_with_sessions(process.pid for process in live_processes() if process.ppid in alive)
    for worker in workers:
        if worker.is_alive():
            worker.kill()
        worker.join()


def _work(
    tasks: SimpleQueue[MatchSpec | None],
    results: multiprocessing.Queue[tuple[Any, ...]],
    runner: MatchRunner,
    parent: int,
    cpus: CpuSet | None = None,
) -> None:
    """A worker process: play matches from `tasks` until the sentinel, asking for each (`ready` at first, then
    `done` with the match played) and reporting every game on `results`. A match that fails ends the worker
    (the caller stops the run at the first failure): it starts no more bots while it is being stopped, and its
    last cleanup is not cut short by the stop signal."""
    raise_open_files_limit()
    pin(cpus)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _exit_on_signal)
    sys.unraisablehook = _raise_stop_again
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()
    results.put(("ready",))
    try:
        while (spec := tasks.get()) is not None:
            try:
                runner(spec, on_game=lambda record: results.put(("game", record)))
            except Exception as error:
                results.put(("error", spec.match_id, _describe(error)))
                return
            results.put(("done", spec.match_id))
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        _kill_leftover_children()
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _describe(error: Exception) -> str:
    """A match's failure for the organiser: an OSError (a full disk, a missing directory) says what it is by
    itself; anything else is named by its type, as it may be a bug."""
    return str(error) if isinstance(error, OSError) else f"{type(error).__name__}: {error}"


class _Stopping(SystemExit):
    """The stop signal, raised in a worker's main thread."""


def _exit_on_signal(signum: int, frame: object) -> None:
    """Raise SystemExit in the worker's main thread, so the match's cleanup kills its bot processes."""
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    raise _Stopping(128 + signum)


def _raise_stop_again(unraisable: Any) -> None:
    """A worker's sys.unraisablehook. A stop signal that arrives where no exception can leave (a hook that runs
    around the fork of a bot starting, a finalizer) is swallowed there, and the worker, now ignoring the
    signal, would play on until it is killed: the signal is sent again, a moment later, from another thread
    (sent from here, it would be raised inside this hook and swallowed again)."""
    if not isinstance(unraisable.exc_value, _Stopping):
        sys.__unraisablehook__(unraisable)
        return
    signal.signal(signal.SIGTERM, _exit_on_signal)
    again = threading.Timer(_POLL_S, _stop_again)
    again.daemon = True
    again.start()


def _stop_again() -> None:
    """Send the stop signal again, unless the worker is already past it (in its last cleanup)."""
    if signal.getsignal(signal.SIGTERM) is _exit_on_signal:
        os.kill(os.getpid(), signal.SIGTERM)


def _kill_leftover_children() -> None:
    """Kill any child of this worker still alive, with its whole session.

    The match runner stops its bots itself; this catches a bot started in the instant a stop signal
    arrived, before the runner knew of it.
    """
    worker = os.getpid()
    kill_with_sessions(process.pid for process in live_processes() if process.ppid == worker)


def _watch_parent(parent: int) -> None:
    """Stop this worker when the process that started it has gone (even if it was SIGKILLed)."""
    while os.getppid() == parent:
        time.sleep(_PARENT_CHECK_S)
    os.kill(os.getpid(), signal.SIGTERM)


class InsecureScheduler(BadInput, ValueError):
    """A scheduler address without TLS (tcp://), or tls:// without the certificates to use it."""


class DaskExecutor(Executor):
    """One task per match on the Dask cluster whose scheduler is at `address`: tls:// with `security`
    (distributed.security.Security: tournaments.league.dask_tls.cluster_security), or inproc:// (a cluster in
    this process). Each worker reports its isolation first; a worker below `required` is refused. `prober` and
    `task` are what the workers run (the defaults: tournaments.league.dask_messages)."""

    def __init__(
        self,
        address: str,
        runner: MatchRunner = run_match,
        *,
        security: Any = None,
        required: Isolation = Isolation.NONE,
        connect_timeout_s: float = _CONNECT_TIMEOUT_S,
        probe_timeout_s: float = _PROBE_TIMEOUT_S,
        prober: Callable[[], str] = probe_isolation,
        task: Callable[..., None] = play_on_dask_worker,
    ) -> None:
        scheme = address.partition("://")[0] if "://" in address else "tcp"
        if scheme not in ("tls", "inproc"):
            raise InsecureScheduler(
                f"the Dask scheduler {address} is not a tls:// address: without TLS anyone who can reach it can run "
                "code on its workers and send the organiser anything (docs: how-to, Play on a Dask cluster)"
            )
        if scheme == "tls" and security is None:
            raise InsecureScheduler(
                f"{address} needs the cluster's certificates: --scheduler-tls FOLDER (made by `referee tournament "
                "dask-certs FOLDER`)"
            )
        self.address = address
        self.runner = runner
        self.security = security
        self.required = required
        self.connect_timeout_s = connect_timeout_s
        self.probe_timeout_s = probe_timeout_s
        self.prober = prober
        self.task = task

    def run(self, specs: Sequence[MatchSpec], on_game: GameSink) -> None:
        if not specs:
            return
        distributed = import_distributed()
        client = _connect(distributed, self.address, self.security, self.connect_timeout_s)
        try:
            self._run(distributed, client, specs, on_game)
        finally:
            client.close()

    def _run(self, distributed: Any, client: Any, specs: Sequence[MatchSpec], on_game: GameSink) -> None:
        run_id = uuid.uuid4().hex
        workers = _workers(client, self.connect_timeout_s, self.address)
        queues = {address: f"referee-{run_id}-{number}" for number, address in enumerate(workers)}
        inbox = _Inbox(
            {address: distributed.Queue(name=name, client=client) for address, name in queues.items()},
            specs,
            self.required,
            on_game,
        )
        accepted = self._probe(client, queues, inbox, run_id)
        futures = {
            client.submit(
                self.task,
                spec,
                queues,
                self.runner,
                workers=accepted,
                allow_other_workers=False,
                pure=False,
                key=_task_key(spec),
            ): spec
            for spec in specs
        }
        try:
            _follow(futures, inbox)
        finally:
            with contextlib.suppress(ExecutorError):
                inbox.drain()
            client.cancel(list(futures))
            for channel in inbox.queues.values():
                channel.close()

    def _probe(self, client: Any, queues: dict[str, str], inbox: _Inbox, run_id: str) -> list[str]:
        """Every worker's isolation, before any match: the workers at `required` or above, or ExecutorError
        naming those below it (or silent)."""
        probes = [
            client.submit(
                probe_on_dask_worker,
                queues,
                self.prober,
                workers=[address],
                allow_other_workers=False,
                pure=False,
                key=f"probe-{run_id}-{number}",
            )
            for number, address in enumerate(queues)
        ]
        deadline = time.monotonic() + self.probe_timeout_s
        try:
            while len(inbox.isolation) < len(queues) and time.monotonic() < deadline:
                time.sleep(_POLL_S)
                failed = [address for address, probe in zip(queues, probes, strict=True) if probe.status == "error"]
                inbox.drain()
                if failed:
                    raise ExecutorError(f"Dask worker {failed[0]} could not report its isolation (its log says why)")
        finally:
            client.cancel(probes)
        silent = [address for address in queues if address not in inbox.isolation]
        if silent:
            raise ExecutorError(
                f"Dask worker(s) {', '.join(silent)} did not report their isolation within {self.probe_timeout_s:g} s"
            )
        refused = {address: level for address, level in inbox.isolation.items() if not meets(level, self.required)}
        if refused:
            listed = ", ".join(f"{address} ({level.value})" for address, level in refused.items())
            raise ExecutorError(
                f"refused Dask worker(s) below the {self.required.value} isolation this league requires: {listed}. "
                "`referee doctor` on those machines says what they lack; stop their workers, or ask for less with "
                "--require-isolation"
            )
        return list(queues)


def meets(level: Isolation, required: Isolation) -> bool:
    """`level` is `required` or stronger (sandbox.STRENGTH orders the levels)."""
    return STRENGTH.index(level) >= STRENGTH.index(required)


class _Inbox:
    """The workers' queues, read as data: each message decoded and checked (tournaments.league.dask_messages),
    each game checked against the match it claims to be of and the isolation required, and handed on."""

    def __init__(
        self, queues: dict[str, Any], specs: Sequence[MatchSpec], required: Isolation, on_game: GameSink
    ) -> None:
        self.queues = queues
        self.specs = {spec.match_id: spec for spec in specs}
        self.required = required
        self.on_game = on_game
        self.isolation: dict[str, Isolation] = {}
        self.done: set[str] = set()

    def drain(self) -> None:
        """Hand on every message waiting; ExecutorError naming the worker of the first that is not right."""
        for worker, channel in self.queues.items():
            try:
                payloads = channel.get(batch=True)
            except Exception as error:
                raise ExecutorError(
                    f"Dask worker {worker} sent something that is not plain data ({type(error).__name__}: "
                    f"{one_line_of(error)}); nothing it sent was unpickled"
                ) from None
            for payload in payloads:
                try:
                    self._take(worker, decode(payload))
                except MessageError as error:
                    raise ExecutorError(f"Dask worker {worker} sent junk instead of a message: {error}") from None

    def _take(self, worker: str, message: Message) -> None:
        if isinstance(message, Probe):
            self.isolation[worker] = message.isolation
        elif isinstance(message, Game):
            self.on_game(self._checked(worker, message.record))
        elif isinstance(message, Done):
            self.done.add(message.match_id)
        else:
            raise ExecutorError(
                f"match {one_line(message.match_id)} failed on Dask worker {worker}: {one_line(message.error)}"
            )

    def _checked(self, worker: str, record: GameRecord) -> GameRecord:
        spec = self.specs.get(record.match_id)
        games = {game.index: game for game in spec.games} if spec is not None else {}
        game = games.get(record.index)
        if spec is None or game is None or record.game != spec.game:
            raise ExecutorError(
                f"Dask worker {worker} sent a record of game {record.index} of match "
                f"{one_line(record.match_id)!r}, which this run did not ask for"
            )
        named = any(bot.named_by_hello for bot in spec.bots)
        if not named and record.seats != tuple(spec.bots[index].name for index in game.seating):
            raise ExecutorError(f"Dask worker {worker} sent a record of match {record.match_id} with other seats")
        if not meets(record.isolation, self.required):
            raise ExecutorError(
                f"Dask worker {worker} played a game of match {record.match_id} at {record.isolation.value} "
                f"isolation, below the {self.required.value} this league requires"
            )
        return record


def one_line_of(error: BaseException) -> str:
    return one_line(str(error))


def one_line(text: str) -> str:
    """Words from elsewhere (a worker's, a library's), on one line and cut short."""
    return " ".join(text.split())[:300]


def import_distributed() -> Any:
    """The dask.distributed module, or DaskUnavailable saying how to install it."""
    try:
        import distributed
    except ImportError as error:
        raise DaskUnavailable(
            "--scheduler needs Dask: pip install 'card-referee[dask]' (dask[distributed]) here and on every worker"
        ) from error
    return distributed


def _connect(distributed: Any, address: str, security: Any, timeout_s: float) -> Any:
    """A client that unpickles nothing it receives: its calls decode msgpack only (a pickle is refused), and its
    stream of reports from the scheduler keeps anything pickled in it (a task's exception, which a worker makes)
    as the undecoded bytes it is. Nothing here reads those, as a task's status says all the organiser needs."""
    try:
        client = distributed.Client(address, timeout=timeout_s, security=security, deserializers=["msgpack"])
    except (OSError, ValueError, TypeError) as error:
        raise ExecutorError(f"cannot reach the Dask scheduler at {address}: {one_line_of(error)}") from error
    _unpickle_nothing(client)
    return client


class TaskFailedUnread(ExecutorError):
    """Stands for the exception a task raised on a worker, which is never unpickled here."""


def _unpickle_nothing(client: Any) -> None:
    """Close the ways a Dask client unpickles what a worker made, which its deserializers do not cover: the
    report stream from the scheduler (left undecoded: a task's exception stays bytes), the type of a task's
    result and a task's exception (which its handlers unpickle: a result's type is dropped, an exception stands
    as TaskFailedUnread) and events (a worker's `warn` event is unpickled: events are dropped). These are the
    client's internals, pinned by tests/tournaments/test_executors.py (a worker raising an exception that
    plants a file when unpickled)."""
    client.scheduler_comm.comm.deserialize = False
    in_memory = client._handle_key_in_memory

    def key_in_memory(key: Any = None, type: Any = None, workers: Any = None) -> None:
        in_memory(key=key, type=None, workers=workers)

    def task_erred(key: Any = None, exception: Any = None, traceback: Any = None) -> None:
        state = client.futures.get(key)
        if state is not None:
            state.set_error(TaskFailedUnread(f"task {key} raised on its worker (its exception is not read)"), None)

    async def event(topic: Any = None, event: Any = None) -> None:
        return None

    client._stream_handlers.update({"key-in-memory": key_in_memory, "task-erred": task_erred, "event": event})
    client._state_handlers.update({"memory": key_in_memory, "erred": task_erred})


def _workers(client: Any, timeout_s: float, address: str) -> list[str]:
    try:
        client.wait_for_workers(1, timeout=timeout_s)
    except (OSError, TimeoutError) as error:
        raise ExecutorError(f"the Dask scheduler at {address} has no worker: {one_line_of(error)}") from error
    return sorted(client.scheduler_info(n_workers=-1)["workers"])


def _task_key(spec: MatchSpec) -> str:
    return f"match-{spec.match_id}-{uuid.uuid4().hex[:8]}"


def _follow(futures: dict[Any, MatchSpec], inbox: _Inbox) -> None:
    """Hand on the games as they come until every match is done; ExecutorError for a task that ended without
    saying so (its error is not read: it would be a pickle)."""
    while not all(spec.match_id in inbox.done for spec in futures.values()):
        time.sleep(_POLL_S)
        states = {future: future.status for future, spec in futures.items() if spec.match_id not in inbox.done}
        inbox.drain()
        for future, status in states.items():
            match_id = futures[future].match_id
            if status in ("error", "cancelled") or (status == "finished" and match_id not in inbox.done):
                raise ExecutorError(
                    f"the task of match {match_id} ended ({status}) without reporting the match played; its "
                    "worker's log says why"
                )


def default_concurrency() -> int:
    return os.cpu_count() or 1
