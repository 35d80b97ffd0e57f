package io.configwatch.fs;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermissions;
import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.fs.RawLocalFileSystem;
import org.apache.hadoop.fs.permission.FsPermission;

/**
 * Hadoop's raw local file system without a child process per call.
 *
 * <p>Without Hadoop's native library, {@link RawLocalFileSystem} runs {@code chmod} for every
 * file it creates and {@code readlink} for every link status (FileContext's rename asks for one),
 * each a process spawned from the JVM: about 40 ms per checkpoint file written
 * (docs/benchmarks.md). Here both are Java NIO calls. A sticky bit, which NIO cannot set, and
 * symbolic links still take Hadoop's own path.
 */
public class NioRawLocalFileSystem extends RawLocalFileSystem {
  @Override
  public void setPermission(Path p, FsPermission permission) throws IOException {
    if (permission.getStickyBit()) {
      super.setPermission(p, permission);
      return;
    }
    // Without a sticky bit its text is NIO's: rwxr-x---.
    Files.setPosixFilePermissions(pathToFile(p).toPath(), PosixFilePermissions.fromString(permission.toString()));
  }

  @Override
  public FileStatus getFileLinkStatus(Path f) throws IOException {
    if (Files.isSymbolicLink(pathToFile(f).toPath())) {
      return super.getFileLinkStatus(f);
    }
    return getFileStatus(f);  // what Hadoop returns for a file or directory that is no link
  }
}
