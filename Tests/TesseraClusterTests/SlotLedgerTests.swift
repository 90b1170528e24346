import Testing
@testable import TesseraCluster

/// The worker's slot accounting, without sockets: a replacement takes over its encode's slot, never a second one.
struct SlotLedgerTests {
    /// The slot taken; fails the test when none was.
    func held(_ slot: SlotLedger.Slot?) throws -> SlotLedger.Slot { try #require(slot) }

    @Test func takesUpToItsCapacity() throws {
        var ledger = SlotLedger(capacity: 2)
        let first = try held(ledger.take()), second = try held(ledger.take())
        #expect(first != second)
        let third = ledger.take()
        #expect(third == nil)
        let release = ledger.give(first)
        #expect(release == .freed)
        let again = ledger.take()
        #expect(again != nil && ledger.used == 2)
    }

    @Test func aReplacementTakesOverTheReplacedSlotWhenNoneIsFree() throws {
        var ledger = SlotLedger(capacity: 1)
        let replaced = try held(ledger.take())
        let replacement = try held(ledger.take(replacing: replaced))
        #expect(ledger.used == 1)
        // The replaced encode ends: its slot stays with the replacement.
        let replacedEnds = ledger.give(replaced)
        let meanwhile = ledger.take()
        #expect(replacedEnds == .handedOver && ledger.used == 1 && meanwhile == nil)
        let replacementEnds = ledger.give(replacement)
        #expect(replacementEnds == .freed && ledger.used == 0 && ledger.overGives == 0)
    }

    @Test func aReplacementReplacedAgainPassesTheOneSlotOn() throws {
        var ledger = SlotLedger(capacity: 1)
        let first = try held(ledger.take())
        let second = try held(ledger.take(replacing: first))
        let third = try held(ledger.take(replacing: second))
        let firstEnds = ledger.give(first), secondEnds = ledger.give(second)
        #expect(firstEnds == .handedOver && secondEnds == .handedOver && ledger.used == 1)
        let thirdEnds = ledger.give(third)
        #expect(thirdEnds == .freed && ledger.used == 0 && ledger.overGives == 0)
    }

    @Test func aReplacementTakesNoSecondSlotWhenOneIsFree() throws {
        var ledger = SlotLedger(capacity: 2)
        let replaced = try held(ledger.take())
        _ = try held(ledger.take(replacing: replaced))
        #expect(ledger.used == 1)
        let other = ledger.take(), beyond = ledger.take()
        #expect(other != nil && beyond == nil)
    }

    @Test func aReplacementOfAnEndedEncodeNeedsAFreeSlot() throws {
        var ledger = SlotLedger(capacity: 1)
        let ended = try held(ledger.take())
        _ = ledger.give(ended)
        let other = try held(ledger.take())
        // The ended encode's answer is not sent yet when its segment comes again: it has no slot to pass on.
        let refused = ledger.take(replacing: ended)
        #expect(refused == nil)
        _ = ledger.give(other)
        let taken = ledger.take(replacing: ended)
        #expect(taken != nil && ledger.used == 1)
    }

    @Test func anOverGiveFreesNothingAndIsCounted() throws {
        var ledger = SlotLedger(capacity: 1)
        let slot = try held(ledger.take())
        let once = ledger.give(slot), twice = ledger.give(slot)
        #expect(once == .freed && twice == .overGive)
        let replaced = try held(ledger.take())
        let replacement = try held(ledger.take(replacing: replaced))
        let replacementEnds = ledger.give(replacement), replacementAgain = ledger.give(replacement)
        #expect(replacementEnds == .freed && replacementAgain == .overGive)
        #expect(ledger.overGives == 2 && ledger.used == 0)
        // The over-gives made no slot: there is still one.
        let first = ledger.take(), second = ledger.take()
        #expect(first != nil && second == nil)
    }
}
