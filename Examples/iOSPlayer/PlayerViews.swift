// The view layer of the iOS example: SwiftUI, kept thin. Not compiled
// anywhere in this repository (there is no SwiftUI on Linux and no stand-in
// of it); everything it calls on the model is in PlayerModel.swift, which
// is type-checked on Linux against the AVFoundation stand-in.
import AVKit
import SwiftUI

@main struct PlayerApp: App {
    @State private var model = PlayerModel(tracks: [
        Track(id: URL(string: "https://cdn.example.com/music/a.mp3")!, title: "A"),
        Track(id: URL(string: "https://cdn.example.com/music/b.m4a")!, title: "B"),
    ])

    var body: some Scene {
        WindowGroup {
            TabView {
                TracksView(model: model).tabItem { Label("Tracks", systemImage: "music.note.list") }
                DownloadsView(model: model).tabItem { Label("Downloads", systemImage: "arrow.down.circle") }
            }
            .task { await model.open() }
        }
    }
}

struct TracksView: View {
    let model: PlayerModel

    var body: some View {
        NavigationStack {
            List(model.tracks) { track in
                HStack {
                    Button(track.title) { model.play(track) }
                    Spacer()
                    if let fraction = model.fraction(of: track) {
                        ProgressView(value: fraction).frame(width: 60)
                    } else {
                        Button("Download", systemImage: "arrow.down.circle") {
                            Task { await model.download(track) }
                        }
                        .labelStyle(.iconOnly)
                    }
                }
            }
            .navigationTitle(model.nowPlaying?.title ?? "Tracks")
            .safeAreaInset(edge: .bottom) { VideoPlayer(player: model.player).frame(height: 60) }
        }
    }
}

struct DownloadsView: View {
    let model: PlayerModel

    var body: some View {
        NavigationStack {
            List {
                ProgressView("All downloads", value: model.batchFraction)
                ForEach(model.tracks.filter { model.downloads[$0.id] != nil }) { track in
                    VStack(alignment: .leading) {
                        Text(track.title)
                        if let record = model.downloads[track.id] {
                            Text(String(describing: record.status)).font(.caption)
                        }
                    }
                    .swipeActions {
                        Button("Cancel", role: .destructive) { Task { await model.cancelDownload(of: track) } }
                    }
                }
            }
            .navigationTitle("Downloads")
        }
    }
}
