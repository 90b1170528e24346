import TesseraCore

// Records made from values rather than rows: for stores other than PostgreSQL (a test's in-memory one).

extension JobRecord {
    public init(id: String, state: JobState, input: String, output: String, spec: JobSpec, settingsHash: String,
                segmentsTotal: Int, segmentsDone: Int, framesTotal: Int64, framesDone: Int64, fps: Double?, speed: Double?,
                error: String?, createdAt: String, updatedAt: String, finishedAt: String?, coordinator: String?,
                assignedCoordinator: String?, stalled: String?, priority: Int, pass: Int?, audit: JobAudit? = nil) {
        self.id = id
        self.state = state
        self.input = input
        self.output = output
        self.spec = spec
        self.settingsHash = settingsHash
        self.segmentsTotal = segmentsTotal
        self.segmentsDone = segmentsDone
        self.framesTotal = framesTotal
        self.framesDone = framesDone
        self.fps = fps
        self.speed = speed
        self.error = error
        self.createdAt = createdAt
        self.updatedAt = updatedAt
        self.finishedAt = finishedAt
        self.coordinator = coordinator
        self.assignedCoordinator = assignedCoordinator
        self.stalled = stalled
        self.priority = priority
        self.pass = pass
        self.audit = audit
    }
}

extension SegmentRecord {
    public init(jobID: String, index: Int, startPTS: Int64, endPTS: Int64, frameCount: Int, state: SegmentState, attempts: Int,
                workerID: String?, resultPath: String?, resultOffset: Int64, checksum: String?, sizeBytes: Int64?,
                encodeSeconds: Double?, lastError: String?) {
        self.jobID = jobID
        self.index = index
        self.startPTS = startPTS
        self.endPTS = endPTS
        self.frameCount = frameCount
        self.state = state
        self.attempts = attempts
        self.workerID = workerID
        self.resultPath = resultPath
        self.resultOffset = resultOffset
        self.checksum = checksum
        self.sizeBytes = sizeBytes
        self.encodeSeconds = encodeSeconds
        self.lastError = lastError
    }
}

extension Lease {
    public init(jobID: String, index: Int, startPTS: Int64, endPTS: Int64, frameCount: Int, attempts: Int, token: String) {
        self.jobID = jobID
        self.index = index
        self.startPTS = startPTS
        self.endPTS = endPTS
        self.frameCount = frameCount
        self.attempts = attempts
        self.token = token
    }
}
