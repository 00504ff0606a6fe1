//! Hot paths do not allocate per node: perft allocates only its per-ply move
//! lists, and generating into a warmed-up list allocates nothing.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use tammi_rules::{MoveList, PerftMode, Position, Variant, perft};

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

fn allocations_during(f: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.load(Ordering::SeqCst);
    f();
    ALLOCATIONS.load(Ordering::SeqCst) - before
}

// One test function only: the counter is global, and tests run in parallel threads.
#[test]
fn hot_paths_do_not_allocate_per_node() {
    for variant in Variant::ALL {
        let start = Position::start(variant);
        // Deep enough for over ten thousand leaves, shallow enough to be quick.
        let depth = match variant {
            Variant::Gothic | Variant::Dameo => 4,
            Variant::Konane => 8,
            Variant::Alquerque => 10,
            Variant::Corner | Variant::OneWay => 10,
            _ => 6,
        };
        let mut leaves = 0;
        let n = allocations_during(|| leaves = perft(&start, depth, PerftMode::Paths));
        assert!(leaves > 10_000);
        // The outer Vec plus one list per ply (plus growth of a few lists).
        assert!(
            n <= 3 * depth as usize + 1,
            "{variant}: {n} allocations for {leaves} leaves"
        );

        // Walk a game; once the list has grown, generation allocates nothing.
        let mut list = MoveList::new();
        let mut positions = vec![start];
        let mut pos = start;
        for ply in 0..120 {
            pos.legal_moves_into(&mut list);
            if list.is_empty() {
                break;
            }
            pos.play_unchecked(&list[ply % list.len()]);
            positions.push(pos);
        }
        for p in &positions {
            p.legal_moves_into(&mut list);
        }
        let n = allocations_during(|| {
            for p in &positions {
                p.legal_moves_into(&mut list);
                let _ = p.count_legal_moves();
            }
        });
        assert_eq!(n, 0, "{variant}: generation allocated");
    }
}
