import TesseraCore

/// A worker's slots, shared by its sessions (one per coordinator) and their encode threads.
final class SlotPool: Sendable {
    private let ledger: Locked<SlotLedger>

    init(_ capacity: Int) { ledger = Locked(SlotLedger(capacity: capacity)) }

    /// Slots held by running encodes.
    var used: Int { ledger.current.used }
    /// Slots given back that were not held (a bug if ever nonzero).
    var overGives: Int { ledger.current.overGives }

    /// A slot for a new encode, or the replaced encode's slot passed to its replacement; nil when all are held.
    func take(replacing replaced: SlotLedger.Slot? = nil) -> SlotLedger.Slot? {
        ledger.withValue { $0.take(replacing: replaced) }
    }

    /// Gives back the slot an encode held, once its encode ended.
    func give(_ slot: SlotLedger.Slot) -> SlotLedger.Release {
        ledger.withValue { $0.give(slot) }
    }
}
