/// A worker's slots, counted exactly: each running encode holds one slot by its number. A replacement
/// encode (the same segment sent again) takes over the slot of the encode it replaces, so the two never
/// hold two slots, and the replaced encode's end does not free the slot its replacement still holds.
struct SlotLedger: Sendable {
    /// One encode's hold on a slot.
    struct Slot: Hashable, Sendable {
        let number: Int
    }

    /// What giving a slot back did.
    enum Release: Equatable, Sendable {
        /// The slot is free again.
        case freed
        /// The slot had passed to a replacement, which holds it still: nothing freed.
        case handedOver
        /// The slot was not held (given back twice, or never taken): a bug, counted, nothing freed.
        case overGive
    }

    let capacity: Int
    private var held: Set<Slot> = []
    /// Slots taken over by a replacement, whose first holder has not given them back yet.
    private var handedOver: Set<Slot> = []
    private var issued = 0
    /// Slots given back that were not held.
    private(set) var overGives = 0

    init(capacity: Int) { self.capacity = capacity }

    /// Slots held by running encodes.
    var used: Int { held.count }

    /// A slot for a new encode; nil when all are held. Replacing an encode that still holds its slot, the
    /// new encode takes that slot over (even when none is free); one whose encode already ended needs a free one.
    mutating func take(replacing replaced: Slot? = nil) -> Slot? {
        if let replaced, held.remove(replaced) != nil {
            handedOver.insert(replaced)
            return issue()
        }
        guard held.count < capacity else { return nil }
        return issue()
    }

    /// Gives back the slot an encode held, once its encode ended.
    mutating func give(_ slot: Slot) -> Release {
        if held.remove(slot) != nil { return .freed }
        if handedOver.remove(slot) != nil { return .handedOver }
        overGives += 1
        return .overGive
    }

    private mutating func issue() -> Slot {
        issued += 1
        let slot = Slot(number: issued)
        held.insert(slot)
        return slot
    }
}
