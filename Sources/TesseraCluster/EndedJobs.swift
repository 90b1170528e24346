/// The ids of the jobs that ended most recently, at most `capacity` of them (the oldest go first): enough to
/// recognise answers that were on their way when a job ended, without growing with a coordinator's age.
struct EndedJobs: Equatable {
    var capacity = 4096
    private var members: Set<String> = []
    private var order: [String] = []

    func contains(_ job: String) -> Bool { members.contains(job) }

    mutating func insert(_ job: String) {
        guard members.insert(job).inserted else { return }
        order.append(job)
        if order.count > capacity {
            members.remove(order.removeFirst())
        }
    }
}
