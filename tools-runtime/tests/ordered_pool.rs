//! `schedule::OrderedPool`: admission by sequence number, the parallel limit, an exclusive
//! entry alone, turns passed on by entering or dropping, and entries that give up.

use std::future::Future;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::poll;
use tools_runtime::schedule::OrderedPool;
use tools_runtime::{CancellationToken, ExecutionMode};

use ExecutionMode::{Exclusive, Parallel};

/// Whether `future` is still waiting (polled once).
async fn waits<F: Future>(future: Pin<&mut F>) -> bool {
    poll!(future).is_pending()
}

#[tokio::test]
async fn entries_are_admitted_by_number_and_one_that_gives_up_is_skipped() {
    let pool = OrderedPool::new(4);
    let mut second = pin!(pool.enter(1, Parallel));
    assert!(waits(second.as_mut()).await, "1 waits for 0");
    let first = pool.enter(0, Parallel).await;
    let second = second.await;
    assert_eq!((first.seq(), second.seq()), (0, 1));
    assert_eq!(pool.running(), 2);
    // A wait dropped before its turn gives the entry up: 4 follows 2 directly.
    {
        let mut gone = pin!(pool.enter(3, Parallel));
        assert!(waits(gone.as_mut()).await, "3 waits for 2");
    }
    let third = pool.enter(2, Parallel).await;
    let fifth = pool.enter(4, Parallel).await;
    assert_eq!((third.seq(), fifth.seq()), (2, 4));
    assert_eq!(pool.running(), 4);
}

#[tokio::test]
async fn an_entry_given_up_before_or_at_its_turn_passes_it_on() {
    let pool = OrderedPool::new(1);
    // Given up before its turn: skipped when the turn comes.
    pool.give_up(1);
    let zero = pool.enter(0, Exclusive).await;
    let mut two = pin!(pool.enter(2, Parallel));
    assert!(waits(two.as_mut()).await, "0 runs alone");
    drop(zero);
    let two = two.await;
    assert_eq!(two.seq(), 2);
    // Given up at its turn, behind a full pool: 4 is next at once, and enters when 2 leaves.
    let mut four = pin!(pool.enter(4, Parallel));
    assert!(waits(four.as_mut()).await, "3's turn");
    pool.give_up(3);
    assert!(waits(four.as_mut()).await, "the pool of one is full");
    drop(two);
    assert_eq!(four.await.seq(), 4);
}

#[tokio::test]
async fn parallel_entries_overlap_up_to_the_limit() {
    let pool = OrderedPool::new(2);
    let a = pool.enter(0, Parallel).await;
    let _b = pool.enter(1, Parallel).await;
    let mut c = pin!(pool.enter(2, Parallel));
    assert!(waits(c.as_mut()).await, "the pool is full");
    drop(a);
    let c = c.await;
    assert_eq!(c.mode(), Parallel);
    assert_eq!(pool.running(), 2);
}

#[tokio::test]
async fn an_exclusive_entry_waits_for_the_pool_to_drain_and_runs_alone() {
    let pool = OrderedPool::new(8);
    let a = pool.enter(0, Parallel).await;
    let mut x = pin!(pool.enter(1, Exclusive));
    assert!(waits(x.as_mut()).await, "waits for 0 to leave");
    let mut later = pin!(pool.enter(2, Parallel));
    assert!(waits(later.as_mut()).await, "behind the exclusive entry");
    drop(a);
    let x = x.await;
    assert_eq!(pool.running(), 1);
    assert!(waits(later.as_mut()).await, "1 runs alone");
    drop(x);
    let _later = later.await;
    assert_eq!(pool.running(), 1);
}

#[tokio::test]
async fn a_turn_holds_later_entries_until_it_enters_is_dropped_or_leaves_exclusively() {
    let pool = OrderedPool::new(4);
    let turn = pool.turn(0).await;
    assert_eq!(turn.seq(), 0);
    let mut next = pin!(pool.turn(1));
    assert!(waits(next.as_mut()).await, "0 holds the turn");
    let _inside = turn.enter(Parallel).await;
    let next = next.await;
    let mut after = pin!(pool.enter(2, Parallel));
    assert!(waits(after.as_mut()).await, "1 holds the turn");
    // Dropped without entering: the turn passes on, and 1 never entered.
    drop(next);
    let after = after.await;
    assert_eq!(pool.running(), 2);
    drop((_inside, after));
    // An exclusive entry keeps the turn until it leaves.
    let x = pool.turn(3).await.enter(Exclusive).await;
    let mut last = pin!(pool.turn(4));
    assert!(waits(last.as_mut()).await, "3 runs alone");
    drop(x);
    assert_eq!(last.await.seq(), 4);
}

#[tokio::test]
async fn a_cancelled_entry_never_runs_and_later_entries_skip_it() {
    let pool = OrderedPool::new(1);
    let cancel = CancellationToken::new();
    let a = pool.enter(0, Parallel).await;
    // 1 has its turn and waits for room; 2 waits for its turn.
    let mut b = pin!(pool.enter_until_cancelled(1, Parallel, &cancel));
    assert!(waits(b.as_mut()).await);
    let mut c = pin!(pool.enter_until_cancelled(2, Parallel, &cancel));
    assert!(waits(c.as_mut()).await);
    cancel.cancel();
    assert!(b.await.is_none());
    assert!(c.await.is_none());
    drop(a);
    // Already cancelled: refused even with room, and skipped.
    assert!(
        pool.enter_until_cancelled(3, Parallel, &cancel)
            .await
            .is_none()
    );
    let d = pool.enter(4, Exclusive).await;
    assert_eq!(d.seq(), 4);
}

/// 200 tasks spawned in reverse order, every 17th exclusive, through a pool of 3: checks the
/// limit and exclusivity inside each entry and returns the order in which they entered.
async fn many_tasks() -> Vec<u64> {
    let pool = Arc::new(OrderedPool::new(3));
    let inside = Arc::new(AtomicUsize::new(0));
    let exclusive_inside = Arc::new(AtomicUsize::new(0));
    let started = Arc::new(std::sync::Mutex::new(Vec::new()));
    let tasks: Vec<_> = (0..200u64)
        .rev()
        .map(|seq| {
            let (pool, inside, exclusive_inside, started) = (
                pool.clone(),
                inside.clone(),
                exclusive_inside.clone(),
                started.clone(),
            );
            tokio::spawn(async move {
                let mode = if seq % 17 == 5 { Exclusive } else { Parallel };
                let _guard = pool.enter(seq, mode).await;
                started.lock().unwrap().push(seq);
                let now = inside.fetch_add(1, Ordering::SeqCst) + 1;
                assert!(now <= 3, "{now} inside");
                assert_eq!(exclusive_inside.load(Ordering::SeqCst), 0);
                if mode == Exclusive {
                    assert_eq!(now, 1, "an exclusive entry runs alone");
                    exclusive_inside.fetch_add(1, Ordering::SeqCst);
                }
                tokio::time::sleep(Duration::from_micros(50 * (seq % 3))).await;
                if mode == Exclusive {
                    exclusive_inside.fetch_sub(1, Ordering::SeqCst);
                }
                inside.fetch_sub(1, Ordering::SeqCst);
            })
        })
        .collect();
    for task in tasks {
        task.await.unwrap();
    }
    started.lock().unwrap().clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_tasks_on_many_threads_keep_the_limit_and_exclusivity() {
    let mut started = many_tasks().await;
    started.sort_unstable();
    assert_eq!(
        started,
        (0..200).collect::<Vec<_>>(),
        "every entry ran once"
    );
}

#[tokio::test]
async fn many_tasks_on_one_thread_enter_in_order() {
    // On one thread an entry records its start before the next one can run.
    assert_eq!(many_tasks().await, (0..200).collect::<Vec<_>>());
}
