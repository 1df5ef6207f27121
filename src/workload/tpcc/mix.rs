//! TPC-C's transaction mix (clause 5.2.3, 5.2.4.2): each client deals its
//! next transaction from a shuffled deck, so that every 100 transactions
//! are the mix exactly — new-order 45, payment 43, order-status, delivery
//! and stock-level 4 each (go-tpc's weights; the spec's minimums are 43%
//! payment and 4% each of the other three, new-order the rest).

use rand::seq::SliceRandom;

use crate::workload::dist::Rng;

/// The five transactions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Tx {
    NewOrder,
    Payment,
    OrderStatus,
    Delivery,
    StockLevel,
}

impl Tx {
    pub const ALL: [Tx; 5] = [
        Tx::NewOrder,
        Tx::Payment,
        Tx::OrderStatus,
        Tx::Delivery,
        Tx::StockLevel,
    ];

    /// Its name, as reports and statement classes say it.
    pub fn name(self) -> &'static str {
        match self {
            Tx::NewOrder => "new-order",
            Tx::Payment => "payment",
            Tx::OrderStatus => "order-status",
            Tx::Delivery => "delivery",
            Tx::StockLevel => "stock-level",
        }
    }

    /// Its cards in a deck of 100.
    pub fn cards(self) -> usize {
        match self {
            Tx::NewOrder => 45,
            Tx::Payment => 43,
            Tx::OrderStatus | Tx::Delivery | Tx::StockLevel => 4,
        }
    }
}

/// One client's deck, dealt in order and shuffled again once used up.
pub struct Deck {
    cards: Vec<Tx>,
    next: usize,
}

impl Deck {
    pub fn new(rng: &mut Rng) -> Deck {
        let mut cards: Vec<Tx> = Tx::ALL
            .iter()
            .flat_map(|t| std::iter::repeat(*t).take(t.cards()))
            .collect();
        cards.shuffle(rng);
        Deck { cards, next: 0 }
    }

    /// The next transaction to run.
    pub fn deal(&mut self, rng: &mut Rng) -> Tx {
        if self.next == self.cards.len() {
            self.cards.shuffle(rng);
            self.next = 0;
        }
        self.next += 1;
        self.cards[self.next - 1]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::dist::rng;

    #[test]
    fn ten_thousand_transactions_are_the_mix_within_a_point() {
        let mut r = rng(11, 0);
        let mut deck = Deck::new(&mut r);
        let mut counts = std::collections::BTreeMap::new();
        // Not a multiple of 100: a deck part dealt counts too.
        let n = 10_037;
        for _ in 0..n {
            *counts.entry(deck.deal(&mut r)).or_insert(0usize) += 1;
        }
        for t in Tx::ALL {
            let pct = 100.0 * counts[&t] as f64 / n as f64;
            assert!(
                (pct - t.cards() as f64).abs() <= 1.0,
                "{}: {pct:.2}%",
                t.name()
            );
        }
        assert_eq!(Tx::ALL.iter().map(|t| t.cards()).sum::<usize>(), 100);
    }

    #[test]
    fn the_deck_is_dealt_in_a_random_order() {
        let mut r = rng(12, 0);
        let mut deck = Deck::new(&mut r);
        let first: Vec<Tx> = (0..100).map(|_| deck.deal(&mut r)).collect();
        let second: Vec<Tx> = (0..100).map(|_| deck.deal(&mut r)).collect();
        assert_ne!(first, second);
        // Each pass is the whole deck.
        let n = |v: &[Tx], t: Tx| v.iter().filter(|x| **x == t).count();
        for t in Tx::ALL {
            assert_eq!(n(&first, t), t.cards());
            assert_eq!(n(&second, t), t.cards());
        }
    }
}
