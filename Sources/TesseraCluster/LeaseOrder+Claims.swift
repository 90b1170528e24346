import TesseraStore

/// Queued jobs are claimed for planning by the rule that leases segments: the first job claimed is the one
/// whose segments would lease first were it planned, so the jobs the lease order chooses among are the ones it
/// would pick from the whole queue.
extension LeaseOrder {
    /// The queued jobs in the order they are claimed. The work estimated at submit stands for the work left; a
    /// job whose work is not known goes after those of its priority whose work is, until it is overdue.
    func claims(_ queued: [QueuedJob]) -> [String] {
        let standings = queued.map { ($0.id, Standing(priority: $0.priority, submitted: -$0.waited, remaining: $0.work ?? .infinity)) }
        return ranked(Dictionary(standings, uniquingKeysWith: { first, _ in first }), now: 0)
    }
}
