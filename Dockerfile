# Strand from its release tarball. Build the tarball first, then the image:
#   mvn -B -DskipTests package && docker build -t strand .
#   docker run -p 8080:8080 -v strand-data:/var/lib/strand strand
# The root token is written to the data volume: docker exec <container> cat /var/lib/strand/root.token
# A JDK rather than a JRE: Chronicle compiles classes at run time (jdk.compiler); bin/strand refuses a JRE.
FROM eclipse-temurin:25-jdk
ARG VERSION=0.1.0-SNAPSHOT
# ADD unpacks a local tar.gz.
ADD dist/target/strand-${VERSION}.tar.gz /opt/
RUN mv /opt/strand-${VERSION} /opt/strand \
 && useradd --system --home-dir /var/lib/strand strand \
 && mkdir -p /var/lib/strand && chown strand /var/lib/strand
USER strand
VOLUME /var/lib/strand
EXPOSE 8080
ENTRYPOINT ["/opt/strand/bin/strand"]
CMD ["serve", "--host", "0.0.0.0", "--port", "8080", "--data", "/var/lib/strand"]
