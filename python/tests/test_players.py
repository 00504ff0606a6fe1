"""Players from spec strings, analysis, matches with their statistics, and
searches that release the GIL."""

import threading
import time

import pytest

import tammi


def test_alphabeta_depth_4_beats_depth_2():
    r = tammi.match("alphabeta:depth=4", "alphabeta:depth=2", games=40, threads=2, seed=1)
    assert r.games == 40 == r.wins + r.draws + r.losses
    assert r.score > 0.6, r
    lo, hi = r.score_interval
    assert lo <= r.score <= hi
    assert r.pdn.count("[Event") == 40
    records = r.game_records()
    assert len(records) == 40 and {g["leg"] for g in records} == {0, 1}
    assert abs(sum(g["a_score"] for g in records) / 40 - r.score) < 1e-9


def test_match_statistics_of_a_one_sided_match():
    r = tammi.match("alphabeta:depth=4", "random", games=10, openings="random:4", seed=3)
    assert r.wins >= 9
    assert r.elo is None or r.elo > 200


def test_best_move_and_analysis():
    g = tammi.Game("english", fen="B:W18:B14,1")
    ab = tammi.Player("alphabeta:depth=6")
    assert ab.best_move(g).text == "14x23"  # a capture is forced
    a = ab.analyze(tammi.Game())
    assert a["best"] in tammi.Game().legal_moves()
    assert a["depth"] == 6 and a["nodes"] > 0
    assert a["pv"][0] == a["best"] and len(a["pv"]) >= 2
    mcts = tammi.Player("mcts:sims=64")
    m = mcts.analyze(tammi.Game())
    assert sum(v for _, v, _ in m["visits"]) >= 60
    assert len(m["wdl"]) == 3 and abs(sum(m["wdl"]) - 1) < 1e-3
    assert m["best"] in tammi.Game().legal_moves()
    # The spec's tree policy reaches the analysed search: one leaf at a time
    # (no virtual loss), without exploration and with a first-play penalty,
    # the uniform evaluator's search keeps to the first move it visits.
    def visits(spec):
        return [v for _, v, _ in tammi.Player(spec).analyze(tammi.Game())["visits"]]

    greedy = visits("mcts:sims=200,batch=1,cpuct=0,fpu=1")
    assert max(greedy) > 0.9 * sum(greedy), greedy
    spread = visits("mcts:sims=200,batch=1")
    assert max(spread) < 0.5 * sum(spread), spread
    r = tammi.Player("random", seed=5)
    g = tammi.Game("international")
    assert r.best_move(g) in g.legal_moves()


def test_a_search_releases_the_gil():
    player = tammi.Player("alphabeta:movetime=500ms")
    game = tammi.Game()
    done = threading.Event()

    def search():
        player.best_move(game)
        done.set()

    t = threading.Thread(target=search)
    t.start()
    spins = 0
    started = time.monotonic()
    while not done.is_set() and time.monotonic() - started < 5:
        spins += 1
    t.join()
    # With the GIL held for the whole search this loop would stand still for
    # half a second; released, it spins freely beside it.
    assert spins > 10_000, spins


def test_bad_specs_and_files_raise():
    with pytest.raises(ValueError):
        tammi.Player("alphabeta:depth=x")
    with pytest.raises(ValueError):
        tammi.Player("chess-engine")
    with pytest.raises(OSError, match="no-such-model"):
        tammi.Player("mcts:model=no-such-model,sims=10", variant="english")
    with pytest.raises(ValueError, match="even"):
        tammi.match("random", "random", games=3)
    with pytest.raises(ValueError, match="ballot"):
        tammi.match("random", "random", games=2, variant="russian", openings="ballot")
    with pytest.raises(OSError):
        tammi.match("random", "random", games=2, openings="/no/such/file")
    over = tammi.Game("english", fen="B:W18:B14")
    over.play("14x23")
    with pytest.raises(ValueError, match="over"):
        tammi.Player("random").best_move(over)
